import type { V1Pod } from '@kubernetes/client-node';
import { unschedulableMessage } from '../../../api/pod-scheduling.js';

/**
 * Why an instance's pod does not answer, in a person's words, from what the scheduler and the
 * kubelet wrote on the pod: the StartDeadlineExceeded condition and Event quote it, so that
 * `kubectl describe` says what to fix (a region no node has, an image that cannot run, a crash).
 */
export function notReadyCauseOf(pod: V1Pod | undefined): string {
  if (!pod) return 'it has no pod';
  const unschedulable = unschedulableMessage(pod);
  if (unschedulable) return `its pod cannot be scheduled: ${unschedulable}`;
  if (!pod.spec?.nodeName) return 'its pod is not scheduled yet';
  const container = pod.status?.containerStatuses?.[0];
  const waiting = container?.state?.waiting;
  const terminated = container?.lastState?.terminated;
  const restarts =
    container && container.restartCount > 0
      ? `; restarted ${container.restartCount} times${terminated ? `, last exit code ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ''}` : ''}`
      : '';
  if (waiting?.reason)
    return `its container is waiting: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}${restarts}`;
  if (container?.state?.running) return `its container runs but does not pass its readiness probe${restarts}`;
  return `its pod is ${pod.status?.phase ?? 'not reporting'}${restarts}`;
}
