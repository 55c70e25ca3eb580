import { PatchStrategy, setHeaderOptions, type CoordinationV1Api } from '@kubernetes/client-node';
import { callKube, isNotFound } from '../../../kube/errors.js';

/**
 * Removes closed days' request-usage annotations from an activity Lease (request-usage.ts says
 * which): one JSON merge patch setting them to null, which is idempotent and leaves every other
 * annotation, and the gateway's fields, alone. A Lease already gone (its instance deleted) is fine.
 */
export async function pruneRequestUsage(
  coordination: CoordinationV1Api,
  lease: { namespace: string; name: string },
  keys: readonly string[],
): Promise<void> {
  if (keys.length === 0) return;
  const annotations = Object.fromEntries(keys.map((key) => [key, null]));
  try {
    await callKube(() =>
      coordination.patchNamespacedLease(
        { namespace: lease.namespace, name: lease.name, body: { metadata: { annotations } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
