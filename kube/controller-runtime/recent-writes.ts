import type { KubernetesObject } from '../kubernetes-object.js';
import type { ObjectKey } from './object-key.js';

interface PendingWrite {
  /** Versions this write replaced (undefined: the object did not exist), through earlier writes too. */
  supersedes: Set<string | undefined>;
  object: KubernetesObject;
}

interface Slot {
  /** The resourceVersion the API returned for this controller's last write; kept after the cache catches up. */
  writtenVersion: string | undefined;
  /** The write itself, only until the cache shows a version it did not replace. */
  pending: PendingWrite | undefined;
}

/**
 * The objects a controller wrote, per owner key and slot (e.g. `StatefulSet/orders`).
 *
 * Until the informer caches catch up, a reconcile that follows its own write often runs before the
 * watch event arrives; reading the stale cache would redo the write, repeat an Event or, for a
 * status, decide a wake or a rotation twice. A write is preferred exactly while the cache still
 * shows a version the write replaced; any other version wins over it.
 *
 * Afterwards, the version of the last write is kept, so a version other than it tells that someone
 * else changed the object since (a hand edit, which the spec must win over).
 */
export class RecentWrites {
  private readonly byOwner = new Map<ObjectKey, Map<string, Slot>>();

  remember(
    owner: ObjectKey,
    slot: string,
    supersedes: KubernetesObject | undefined,
    written: KubernetesObject,
  ): void {
    // As the informers do: nothing reads them, and an apply's answer carries them whole. A write
    // stays pending until a later reconcile of its owner reads the slot, and the last write of a
    // burst may wait for the next resync: 2,000 instances applied at once kept that many copies.
    delete written.metadata?.managedFields;
    let slots = this.byOwner.get(owner);
    if (!slots) this.byOwner.set(owner, (slots = new Map()));
    const replaced = new Set(slots.get(slot)?.pending?.supersedes);
    replaced.add(supersedes?.metadata?.resourceVersion);
    slots.set(slot, {
      writtenVersion: written.metadata?.resourceVersion,
      pending: { supersedes: replaced, object: written },
    });
  }

  /** The freshest known version of the object in `slot`: the cached one, or this controller's write. */
  read<T extends KubernetesObject>(owner: ObjectKey, slot: string, cached: T | undefined): T | undefined {
    const entry = this.byOwner.get(owner)?.get(slot);
    const pending = entry?.pending;
    if (!entry || !pending) return cached;
    if (pending.supersedes.has(cached?.metadata?.resourceVersion)) return pending.object as T;
    entry.pending = undefined;
    return cached;
  }

  /** Whether `current` is, unchanged, the version this controller's last write to `slot` produced. */
  isOwnLastWrite(owner: ObjectKey, slot: string, current: KubernetesObject | undefined): boolean {
    const version = current?.metadata?.resourceVersion;
    return version !== undefined && this.byOwner.get(owner)?.get(slot)?.writtenVersion === version;
  }

  forget(owner: ObjectKey): void {
    this.byOwner.delete(owner);
  }
}
