import { objectKey } from '../../kube/controller-runtime/object-key.js';
import { InstanceDeletingError, UnknownInstanceError } from '../http/errors.js';
import type { AwaitReady } from './await-ready.js';
import type { RouteTable } from './route-table.js';
import type { Waker } from './waker.js';

/**
 * Keeps held requests in step with their instance: a wake is asked for again when the instance
 * changes while requests wait (it hibernated after they arrived, or a failed wake can be retried
 * on new information), and requests held for an instance that is deleted end with a 404. The
 * waker forgets a deleted instance, so what it remembers stays bounded by the instances that exist.
 */
export function followInstanceChanges(parts: {
  routes: Pick<RouteTable, 'onChange'>;
  awaitReady: Pick<AwaitReady, 'isHolding' | 'fail'>;
  waker: Pick<Waker, 'ensureAwake' | 'forget'>;
}): () => void {
  return parts.routes.onChange((ref, instance) => {
    const key = objectKey(ref);
    if (!instance) parts.waker.forget(key);
    if (!parts.awaitReady.isHolding(key)) return;
    if (!instance) parts.awaitReady.fail(key, new UnknownInstanceError(ref));
    else if (instance.metadata.deletionTimestamp) parts.awaitReady.fail(key, new InstanceDeletingError(ref));
    else parts.waker.ensureAwake(instance);
  });
}
