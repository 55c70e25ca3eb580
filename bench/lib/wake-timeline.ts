/**
 * Where a wake's time goes, seen from the API server: watches on the instance, its StatefulSet and
 * its pod record when each step of the chain became visible (the gateway's wake annotation, the
 * operator's scale to 1, the StatefulSet controller's pod, the scheduler's binding, the kubelet
 * stand-in's Running pod for the starting engine, the pod Ready). Watch
 * delivery adds about a millisecond to each, alike for all of them, so the gaps between steps hold.
 */
import { Watch, type KubeConfig, type V1Pod, type V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATION_WAKE_REQUESTED, SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';

/** performance.now() of each step of the latest wake, once seen. */
export interface WakeMilestones {
  annotated?: number;
  scaledUp?: number;
  podCreated?: number;
  /** The scheduler bound the pod to a node (spec.nodeName set). */
  podScheduled?: number;
  /** The kubelet stand-in reported the pod Running: its engine process is starting. */
  podRunning?: number;
  podReady?: number;
}

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
        const ready = object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (ready) mark('podReady');
      },
      () => undefined,
    ),
  ]);
  return {
    reset: () => {
      milestones = {};
    },
    current: () => ({ ...milestones }),
    stop: () => {
      for (const request of aborts) request.abort();
    },
  };
}
