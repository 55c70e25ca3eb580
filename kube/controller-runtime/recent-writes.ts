import type { KubernetesObject } from '../kubernetes-object.js';
import { trimObject } from '../object-trim.js';
import { stableStringify } from '../stable-stringify.js';
import type { ObjectKey } from './object-key.js';

interface PendingWrite {
  /** Versions this write replaced (undefined: the object did not exist), through earlier writes too. */
  supersedes: Set<string | undefined>;
  object: KubernetesObject;
}

interface Slot {
  /** The resourceVersion the API returned for this controller's last write; kept after the cache catches up. */
  writtenVersion: string | undefined;
  /** That write's metadata.generation (kinds with a status have one) and the rest of its metadata. */
  writtenGeneration: number | undefined;
  writtenMetadata: string;
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
 * else changed the object since (a hand edit, which the spec must win over). For a kind with a
 * generation (a StatefulSet), a version that only another controller's status write made is still
 * this controller's write: the API server bumps the generation on any change to the spec, and the
 * metadata is compared too. Without that, each status update of a StatefulSet's controller (at
 * least one per new instance) cost a server-side apply that changed nothing.
 */
export class RecentWrites {
  private readonly byOwner = new Map<ObjectKey, Map<string, Slot>>();

  remember(
    owner: ObjectKey,
    slot: string,
    supersedes: KubernetesObject | undefined,
    written: KubernetesObject,
  ): void {
    // As the informers do: nothing reads managedFields, and an apply's answer carries them whole.
    // A write stays pending until its own watch event arrives (observeEvent) or a later reconcile of
    // its owner reads the slot: 2,000 instances applied at once keep that many copies meanwhile.
    // A kind's own trim is its informer's (Informer.trim), applied by the caller.
    trimObject(written);
    let slots = this.byOwner.get(owner);
    if (!slots) this.byOwner.set(owner, (slots = new Map()));
    const replaced = new Set(slots.get(slot)?.pending?.supersedes);
    replaced.add(supersedes?.metadata?.resourceVersion);
    slots.set(slot, {
      writtenVersion: written.metadata?.resourceVersion,
      writtenGeneration: written.metadata?.generation,
      writtenMetadata: metadataOutsideVersion(written),
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

  /**
   * Whether `current` is the version this controller's last write to `slot` produced, unchanged but
   * for its status (see above).
   */
  isOwnLastWrite(owner: ObjectKey, slot: string, current: KubernetesObject | undefined): boolean {
    const metadata = current?.metadata;
    const entry = this.byOwner.get(owner)?.get(slot);
    if (!metadata?.resourceVersion || !entry) return false;
    if (entry.writtenVersion === metadata.resourceVersion) return true;
    return (
      metadata.generation !== undefined &&
      metadata.generation === entry.writtenGeneration &&
      metadataOutsideVersion(current) === entry.writtenMetadata
    );
  }

  /**
   * A watch event shows `object`: whether it is exactly the version this controller's last write to
   * `slot` produced, so the event tells the owner's reconcile nothing the write's answer did not (a
   * version someone else made, even of the status only, is never this). If it is, the informer's
   * cache holds that version now and the write's copy is dropped: the event wakes no reconcile that
   * would read the slot and drop it, and a quiet owner would keep it until the next resync.
   */
  observeEvent(owner: ObjectKey, slot: string, object: KubernetesObject): boolean {
    const version = object.metadata?.resourceVersion;
    const entry = this.byOwner.get(owner)?.get(slot);
    if (version === undefined || entry?.writtenVersion !== version) return false;
    entry.pending = undefined;
    return true;
  }

  forget(owner: ObjectKey): void {
    this.byOwner.delete(owner);
  }
}

/**
 * What a write can change in metadata besides the spec (labels, annotations, owners, finalizers),
 * and the uid: an object deleted and made again by someone else starts over at generation 1, which
 * may equal the generation this controller wrote.
 */
function metadataOutsideVersion(object: KubernetesObject | undefined): string {
  const { uid, labels, annotations, ownerReferences, finalizers } = object?.metadata ?? {};
  return stableStringify([uid, labels, annotations, ownerReferences, finalizers]);
}
