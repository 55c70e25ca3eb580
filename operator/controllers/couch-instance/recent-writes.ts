import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectKey } from '../../runtime/object-key.js';

interface Write {
  /** Versions this write replaced (undefined: the object did not exist), through earlier writes too. */
  supersedes: Set<string | undefined>;
  object: KubernetesObject;
}

/**
 * The objects this controller wrote, until the informer caches catch up. A reconcile that follows
 * its own write often runs before the watch event arrives; reading the stale cache would redo the
 * write, repeat an Event or, for a status, decide a wake twice. A write is preferred exactly while
 * the cache still shows a version the write replaced; any other version wins over it.
 */
export class RecentWrites {
  private readonly byInstance = new Map<ObjectKey, Map<string, Write>>();

  remember(
    instance: ObjectKey,
    slot: string,
    supersedes: KubernetesObject | undefined,
    written: KubernetesObject,
  ): void {
    let writes = this.byInstance.get(instance);
    if (!writes) this.byInstance.set(instance, (writes = new Map()));
    const replaced = new Set(writes.get(slot)?.supersedes);
    replaced.add(supersedes?.metadata?.resourceVersion);
    writes.set(slot, { supersedes: replaced, object: written });
  }

  /** The freshest known version of the object in `slot`: the cached one, or this controller's write. */
  read<T extends KubernetesObject>(instance: ObjectKey, slot: string, cached: T | undefined): T | undefined {
    const writes = this.byInstance.get(instance);
    const write = writes?.get(slot);
    if (!write) return cached;
    if (write.supersedes.has(cached?.metadata?.resourceVersion)) return write.object as T;
    writes?.delete(slot);
    return cached;
  }

  forget(instance: ObjectKey): void {
    this.byInstance.delete(instance);
  }
}
