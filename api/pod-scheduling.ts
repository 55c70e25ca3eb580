import type { V1Pod } from '@kubernetes/client-node';

/**
 * The scheduler's part of the gateway–operator contract (contract.ts): both read an instance's pod
 * and, when the scheduler could not place it, its own words for why. The operator shows them in the
 * instance's conditions and an Event; the gateway answers a wake with a 503 at once instead of
 * holding the request until its wake timeout.
 *
 * Two of the scheduler's answers pass by themselves, so they do not count:
 * - "pod has unbound immediate PersistentVolumeClaims": a first start's claim is bound by the
 *   provisioner a moment after the pod is created, and the scheduler retries then;
 * - `persistentvolumeclaim "data-x-0" not found`: the StatefulSet controller creates the claim
 *   before the pod, but the scheduler's claim cache can see it after the pod (its volume binding
 *   PreFilter reads the claim from that cache) and it retries when the claim arrives; under load
 *   a first start can show it for a moment.
 * Node affinity (region pinning to a region no node has), taints and insufficient resources do
 * not pass without a change to the cluster or the instance.
 */
const TRANSIENT_MESSAGES: readonly RegExp[] = [
  /unbound immediate PersistentVolumeClaims/,
  /persistentvolumeclaim "[^"]+" not found/,
];

/** The scheduler's message when it could not place the pod for a lasting reason; else undefined. */
export function unschedulableMessage(pod: V1Pod | undefined): string | undefined {
  if (!pod || pod.spec?.nodeName || pod.metadata?.deletionTimestamp) return undefined;
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status !== 'False' || scheduled.reason !== 'Unschedulable') return undefined;
  const message = scheduled.message ?? 'the scheduler found no node for the pod';
  return TRANSIENT_MESSAGES.some((transient) => transient.test(message)) ? undefined : message;
}
