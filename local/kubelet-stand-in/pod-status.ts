import type {
  V1ContainerState,
  V1ContainerStatus,
  V1Pod,
  V1PodCondition,
  V1PodStatus,
} from '@kubernetes/client-node';

/** The host address every local node reports (pods get addresses of their own). */
export const LOCAL_HOST_IP = '127.0.0.1';

/** What the stand-in knows about a pod's one engine container, as a kubelet's status manager does. */
export type ContainerPhase =
  /** Not started: `reason` is the kubelet's waiting reason (ContainerCreating, CrashLoopBackOff, ...). */
  | { kind: 'waiting'; reason: string; message?: string }
  | { kind: 'running'; startedAt: Date; started: boolean; ready: boolean }
  | { kind: 'terminated'; exitCode: number; reason: string; startedAt: Date; finishedAt: Date };

export interface PodStatusInput {
  pod: V1Pod;
  podIP: string | undefined;
  container: ContainerPhase;
  restartCount: number;
  /** The previous run's end, shown as lastState once the container restarted. */
  lastTermination?: V1ContainerState['terminated'];
  startTime: Date;
  now: Date;
}

/**
 * The status a kubelet reports for a pod of one container: its phase, IPs, the four conditions
 * (PodScheduled kept as the scheduler wrote it) and the container's state. Each condition keeps
 * its lastTransitionTime until its status changes.
 */
export function buildPodStatus(input: PodStatusInput): V1PodStatus {
  const { pod, container } = input;
  const ready = container.kind === 'running' && container.ready;
  const previous = pod.status?.conditions ?? [];
  const condition = (type: string, status: boolean, reason?: string): V1PodCondition => {
    const value = status ? 'True' : 'False';
    const before = previous.find((c) => c.type === type);
    return {
      type,
      status: value,
      lastTransitionTime:
        before?.status === value && before.lastTransitionTime ? before.lastTransitionTime : input.now,
      ...(reason && !status ? { reason } : {}),
    };
  };
  const spec = pod.spec?.containers[0];
  const state: V1ContainerState =
    container.kind === 'waiting'
      ? {
          waiting: { reason: container.reason, ...(container.message ? { message: container.message } : {}) },
        }
      : container.kind === 'running'
        ? { running: { startedAt: container.startedAt } }
        : {
            terminated: {
              exitCode: container.exitCode,
              reason: container.reason,
              startedAt: container.startedAt,
              finishedAt: container.finishedAt,
            },
          };
  const containerStatus: V1ContainerStatus = {
    name: spec?.name ?? '',
    image: spec?.image ?? '',
    imageID: '',
    ready,
    started: container.kind === 'running' && container.started,
    restartCount: input.restartCount,
    state,
    ...(input.lastTermination ? { lastState: { terminated: input.lastTermination } } : {}),
  };
  const scheduled = previous.find((c) => c.type === 'PodScheduled') ?? condition('PodScheduled', true);
  return {
    phase: podPhase(container, pod.spec?.restartPolicy),
    hostIP: LOCAL_HOST_IP,
    hostIPs: [{ ip: LOCAL_HOST_IP }],
    ...(input.podIP ? { podIP: input.podIP, podIPs: [{ ip: input.podIP }] } : {}),
    startTime: input.startTime,
    conditions: [
      scheduled,
      condition('Initialized', true),
      condition('ContainersReady', ready, 'ContainersNotReady'),
      condition('Ready', ready, 'ContainersNotReady'),
    ],
    containerStatuses: [containerStatus],
  };
}

function podPhase(container: ContainerPhase, restartPolicy: string | undefined): V1PodStatus['phase'] {
  if (container.kind === 'running') return 'Running';
  if (container.kind === 'waiting') return 'Pending';
  if ((restartPolicy ?? 'Always') === 'Always') return 'Running';
  if (container.exitCode === 0) return 'Succeeded';
  return restartPolicy === 'Never' ? 'Failed' : 'Running';
}
