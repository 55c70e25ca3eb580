import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { waitFor } from './wait.js';

/** Put on every new Node by the API server; the node lifecycle controller lifts it once the node is Ready. */
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/** Whether the scheduler may place pods on `node`: it reports Ready and no longer carries the not-ready taint. */
export function isSchedulable(node: V1Node): boolean {
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return ready && !(node.spec?.taints ?? []).some((taint) => taint.key === NOT_READY_TAINT);
}

/**
 * Waits until every node in `names` is registered and schedulable, as a cluster's nodes are before
 * its tenants apply anything. A pod the scheduler tries while the taint is still on is left
 * Unschedulable until a retry, and the scheduler may put that off for up to five minutes (a CI run
 * of the local platform's test saw the paid example's pod still blamed on the taint 60 s later).
 */
export async function waitForNodesSchedulable(
  kubeConfig: KubeConfig,
  names: readonly string[],
  timeoutMs = 60_000,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await waitFor(
    `nodes ${names.join(', ')} to be Ready and untainted`,
    async () => {
      const { items } = await core.listNode();
      const schedulable = new Set(items.filter(isSchedulable).map((node) => node.metadata?.name));
      return names.every((name) => schedulable.has(name)) ? true : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  );
}
