/**
 * Where a wake's time goes, seen from the API server: watches on the instance, its StatefulSet and
 * its pod record when each step of the chain became visible (the gateway's wake annotation, the
 * operator's scale to 1, the StatefulSet controller's pod, the scheduler's binding, the kubelet
 * stand-in's Running pod for the starting engine, the pod Ready). Watch
 * delivery adds about a millisecond to each, alike for all of them, so the gaps between steps hold.
 * One step is not in the API: when the engine first answers /_up, which the timeline sees by
 * probing the pod's address every 5 ms from the moment it has one, as the gateway does.
 * Every write those watches and the namespace's Events and Leases show is kept too (`writes`):
 * each is work for the API server and for every client watching it, on the cores the engine boots on.
 */
import {
  Watch,
  type CoreV1Event,
  type KubeConfig,
  type V1Lease,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
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
  /** The kubelet stand-in reported the pod Running (with its IP): its engine process is starting. */
  podRunning?: number;
  /**
   * The engine's process was spawned (the container started): not in the API (a pod's timestamps
   * are whole seconds), so read by the bench from the spawn time the stand-in records in its pid file
   * (cold-start.ts).
   */
  containerStarted?: number;
  /** The engine's /_up first answered 200 (probed every 5 ms): its boot ended. */
  engineUp?: number;
  podReady?: number;
}

const UP_PROBE_INTERVAL_MS = 5;

/** One write seen by a watch: what was written (kind, and an Event's object and reason) and when. */
export interface SeenWrite {
  what: string;
  at: number;
}

export interface WakeTimeline {
  /** Forgets the previous wake: call just before sending the request that wakes. */
  reset(): void;
  current(): WakeMilestones;
  /**
   * Who wrote the StatefulSet's first version at 1 replicas since the reset: the field manager
   * that owns `spec.replicas` in it, with its subresource (`settee-gateway/scale`,
   * `settee-operator/scale`), or undefined before it is seen.
   */
  scaledUpBy(): string | undefined;
  /** The writes seen since the last reset. */
  writes(): readonly SeenWrite[];
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
  let scaledUpBy: string | undefined;
  let writes: SeenWrite[] = [];
  const wrote = (what: string): void => void writes.push({ what, at: performance.now() });
  const watch = new Watch(kubeConfig);
  const { namespace, name } = instance;
  const fieldSelector = `metadata.name=${name}`;
  const aborts = await Promise.all([
    watch.watch(
      `/apis/${SETTEE_GROUP}/${SETTEE_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}`,
      { fieldSelector },
      (type: string, object: CouchInstance) => {
        wrote(`CouchInstance ${type}`);
        const annotation = object.metadata.annotations?.[ANNOTATION_WAKE_REQUESTED];
        if (annotation !== undefined && annotation !== lastAnnotation) mark('annotated');
        lastAnnotation = annotation;
      },
      () => undefined,
    ),
    watch.watch(
      `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
      { fieldSelector },
      (type: string, object: V1StatefulSet) => {
        wrote(`StatefulSet ${type}`);
        if ((object.spec?.replicas ?? 0) > 0 && milestones.scaledUp === undefined) {
          mark('scaledUp');
          scaledUpBy = replicasWriter(object);
        }
      },
      () => undefined,
    ),
    watch.watch(
      `/api/v1/namespaces/${namespace}/pods`,
      { fieldSelector: `metadata.name=${name}-0` },
      (type: string, object: V1Pod) => {
        wrote(`Pod ${type}`);
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
    watch.watch(
      `/api/v1/namespaces/${namespace}/events`,
      {},
      (type: string, object: CoreV1Event) =>
        wrote(`Event ${type} ${object.involvedObject.kind ?? ''} ${object.reason ?? ''}`),
      () => undefined,
    ),
    watch.watch(
      `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
      {},
      (type: string, object: V1Lease) => wrote(`Lease ${type} ${object.metadata?.name ?? ''}`),
      () => undefined,
    ),
  ]);
  return {
    reset: () => {
      milestones = {};
      scaledUpBy = undefined;
      writes = [];
      probing = undefined;
    },
    current: () => ({ ...milestones }),
    scaledUpBy: () => scaledUpBy,
    writes: () => [...writes],
    stop: () => {
      probing = undefined;
      for (const request of aborts) request.abort();
    },
  };
}

/**
 * The field manager owning `spec.replicas` (one owns it: every writer applies it forced), as
 * `manager/subresource` for a write through a subresource.
 */
function replicasWriter(statefulSet: V1StatefulSet): string | undefined {
  const entry = statefulSet.metadata?.managedFields?.find((field) => {
    const spec = (field.fieldsV1 as Record<string, Record<string, unknown> | undefined> | undefined)?.[
      'f:spec'
    ];
    return spec?.['f:replicas'] !== undefined;
  });
  if (!entry) return undefined;
  return entry.subresource ? `${entry.manager ?? '?'}/${entry.subresource}` : entry.manager;
}
