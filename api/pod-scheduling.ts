import type { V1Pod } from '@kubernetes/client-node';

/**
 * The scheduler's part of the gateway–operator contract (contract.ts): both read an instance's pod
 * and, when the scheduler could not place it, its own words for why. The operator shows them in the
 * instance's conditions and an Event; the gateway answers a wake with a 503 at once instead of
 * holding the request until its wake timeout.
 *
 * A first start's claim is bound by the provisioner a moment after the pod is created, and the
 * scheduler says "pod has unbound immediate PersistentVolumeClaims" until it retries: that passes
 * by itself, so it does not count. Node affinity (region pinning to a region no node has), taints
 * and insufficient resources do not pass without a change to the cluster or the instance.
 */
const TRANSIENT_MESSAGE = 'unbound immediate PersistentVolumeClaims';

/** The scheduler's message when it could not place the pod for a lasting reason; else undefined. */
export function unschedulableMessage(pod: V1Pod | undefined): string | undefined {
  if (!pod || pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return undefined;
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  const message = scheduled.message ?? 'the scheduler found no node for the pod';
  return message.includes(TRANSIENT_MESSAGE) ? undefined : message;
}
