/**
 * Where a wake's time goes, seen from the API server: watches on the instance, its StatefulSet and
 * its pod record when each step of the chain became visible (the gateway's wake annotation, the
 * operator's scale to 1, the StatefulSet controller's pod, the scheduler's binding, the kubelet
 * stand-in's Running pod for the starting engine, the pod Ready). Watch
 * delivery adds about a millisecond to each, alike for all of them, so the gaps between steps hold.
 * One step is not in the API: when the engine first answers /_up, which the timeline sees by
 * probing the pod's address every 5 ms from the moment it has one, as the gateway does.
 */
import { Watch, type KubeConfig, type V1Pod, type V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATION_WAKE_REQUESTED, SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';
import { podAddress } from '../../api/pod-address.js';
import { probeUp } from '../../couchdb/probe-up.js';

/** performance.now() of each step of the latest wake, once seen. */
export interface WakeMilestones {
  annotated?: number;
  scaledUp?: number;
  podCreated?: number;
  /** The scheduler bound the pod to a node (spec.nodeName set). */
  podScheduled?: number;
  /** The kubelet stand-in reported the pod Running: its engine process is starting. */
  podRunning?: number;
  /** The engine's /_up first answered 200 (probed every 5 ms): its boot ended. */
  engineUp?: number;
  podReady?: number;
}

const UP_PROBE_INTERVAL_MS = 5;

export interface WakeTimeline {
  /** Forgets the previous wake: call just before sending the request that wakes. */
  reset(): void;
  current(): WakeMilestones;
  stop(): void;
}

export async function watchWakeTimeline(
  kubeConfig: KubeConfig,
  instance: { namespace: string; name: string },
): Promise<WakeTimeline> {
  let milestones: WakeMilestones = {};
  let lastAnnotation: string | undefined;
  /** The address being probed for the current wake's engineUp. */
  let probing: string | undefined;
  const probeUntilUp = async (origin: string): Promise<void> => {
    probing = origin;
    while (probing === origin && milestones.engineUp === undefined) {
      // The gateway's own probe: measuring takes no more CPU from the engine's boot than the gateway does.
      if (await probeUp(origin, 1_000)) mark('engineUp');
      else await new Promise((resolve) => setTimeout(resolve, UP_PROBE_INTERVAL_MS));
    }
  };
  const mark = (step: keyof WakeMilestones): void => {
    milestones[step] ??= performance.now();
  };
  const watch = new Watch(kubeConfig);
  const { namespace, name } = instance;
  const fieldSelector = `metadata.name=${name}`;
  const aborts = await Promise.all([
    watch.watch(
      `/apis/${SETTEE_GROUP}/${SETTEE_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}`,
      { fieldSelector },
      (_type: string, object: CouchInstance) => {
        const annotation = object.metadata.annotations?.[ANNOTATION_WAKE_REQUESTED];
        if (annotation !== undefined && annotation !== lastAnnotation) mark('annotated');
        lastAnnotation = annotation;
      },
      () => undefined,
    ),
    watch.watch(
      `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
      { fieldSelector },
      (_type: string, object: V1StatefulSet) => {
        if ((object.spec?.replicas ?? 0) > 0) mark('scaledUp');
      },
      () => undefined,
    ),
    watch.watch(
      `/api/v1/namespaces/${namespace}/pods`,
      { fieldSelector: `metadata.name=${name}-0` },
      (type: string, object: V1Pod) => {
        if (type === 'DELETED' || object.metadata?.deletionTimestamp) return;
        mark('podCreated');
        if (object.spec?.nodeName) mark('podScheduled');
        if (object.status?.phase === 'Running') mark('podRunning');
        const origin = podAddress(object)?.origin;
        if (origin !== undefined && origin !== probing && milestones.engineUp === undefined)
          void probeUntilUp(origin);
        const ready = object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (ready) mark('podReady');
      },
      () => undefined,
    ),
  ]);
  return {
    reset: () => {
      milestones = {};
      probing = undefined;
    },
    current: () => ({ ...milestones }),
    stop: () => {
      probing = undefined;
      for (const request of aborts) request.abort();
    },
  };
}
