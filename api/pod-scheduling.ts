import type { V1Pod } from '@kubernetes/client-node';

/**
 * The scheduler's part of the gateway–operator contract (contract.ts): both read an instance's pod
 * and, when the scheduler could not place it, its own words for why. The operator shows them in the
 * instance's conditions and an Event; the gateway answers a wake with a 503 at once instead of
 * holding the request until its wake timeout.
 *
 * Two of the scheduler's answers pass by themselves, so they do not count when they are its only
 * reason (both come from the volume binding PreFilter, which rejects the pod before any node is
 * looked at, so the scheduler gives no other reason with them; were one to come with another, say
 * a taint, the other would not pass and the message counts):
 * - "pod has unbound immediate PersistentVolumeClaims": a first start's claim is bound by the
 *   provisioner a moment after the pod is created, and the scheduler retries then;
 * - `persistentvolumeclaim "data-x-0" not found`: the StatefulSet controller creates the claim
 *   before the pod, but the scheduler's claim cache can see it after the pod, and it retries when
 *   the claim arrives; under load a first start can show it for a moment.
 * Node affinity (region pinning to a region no node has), taints and insufficient resources do
 * not pass without a change to the cluster or the instance.
 */
const TRANSIENT_REASON =
  /^(\d+ )?(pod has unbound immediate PersistentVolumeClaims|persistentvolumeclaim "[^"]+" not found)$/;

/**
 * The reasons of a scheduler message, "0/2 nodes are available: <reasons>. preemption: …", as
 * written between the colon and the preemption part; the whole message when it has another form.
 */
function schedulerReasons(message: string): string {
  const reasons = /nodes are available: (.*?)\.?( preemption: .*)?$/s.exec(message)?.[1];
  return reasons ?? message;
}

/** The scheduler's message when it could not place the pod for a lasting reason; else undefined. */
export function unschedulableMessage(pod: V1Pod | undefined): string | undefined {
  if (!pod || pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return undefined;
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  const message = scheduled.message ?? 'the scheduler found no node for the pod';
  return TRANSIENT_REASON.test(schedulerReasons(message)) ? undefined : message;
}
