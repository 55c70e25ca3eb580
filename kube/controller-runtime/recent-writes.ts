import crypto from 'node:crypto';
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
  /**
   * That write's metadata.generation (kinds with a status have one) and a digest of the rest of its
   * metadata, kept only with a generation (the only case that compares it).
   */
  writtenGeneration: number | undefined;
  writtenMetadata: string | undefined;
  /** The write itself, only until the cache shows a version it did not replace. */
  pending: PendingWrite | undefined;
}

/** A watch event of a slot that arrived while a write of it was in flight, decided once it is answered. */
interface HeldEvent {
  object: KubernetesObject;
  decide(own: boolean): void;
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
  /** Per `owner slot`, the events that arrived while a write of it was in flight (write). */
  private readonly inFlight = new Map<string, HeldEvent[]>();

  /**
   * Sends a write of `slot` (`send`, which returns the API's answer in the cache's shape) and
   * remembers it. The write is known as this controller's own before it is sent: its watch event may
   * arrive before its answer, when its resourceVersion is not known yet, and would then look like
   * someone else's change. Events of the slot that arrive meanwhile are held (observeEvent returns a
   * promise) and decided once the write is answered, by the answer's version; if the write fails,
   * by the last write's, so that a change not this controller's still wakes its owner.
   */
  async write<T extends KubernetesObject>(
    owner: ObjectKey,
    slot: string,
    supersedes: KubernetesObject | undefined,
    send: () => Promise<T>,
  ): Promise<T> {
    const key = inFlightKey(owner, slot);
    const held: HeldEvent[] = [];
    this.inFlight.set(key, held);
    try {
      const written = await send();
      this.remember(owner, slot, supersedes, written);
      return written;
    } finally {
      this.inFlight.delete(key);
      for (const event of held) event.decide(this.observeEvent(owner, slot, event.object) === true);
    }
  }

  remember(
    owner: ObjectKey,
    slot: string,
    supersedes: KubernetesObject | undefined,
    written: KubernetesObject,
  ): void {
    // As the informers do: of managedFields only their writers are read (field-writers.ts), and an
    // apply's answer carries them whole.
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
      writtenMetadata:
        written.metadata?.generation === undefined ? undefined : metadataOutsideVersion(written),
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
   * While a write of the slot is in flight, the answer comes once it is answered (write); the
   * promise never rejects.
   */
  observeEvent(owner: ObjectKey, slot: string, object: KubernetesObject): boolean | Promise<boolean> {
    const held = this.inFlight.get(inFlightKey(owner, slot));
    if (held) return new Promise((decide) => held.push({ object, decide }));
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

function inFlightKey(owner: ObjectKey, slot: string): string {
  return `${owner} ${slot}`;
}

/**
 * A digest of what a write can change in metadata besides the spec (labels, annotations, owners,
 * finalizers), and the uid: an object deleted and made again by someone else starts over at
 * generation 1, which may equal the generation this controller wrote. A digest, not the JSON: kept
 * per written object, the JSON stayed in memory as the many-piece string its concatenation built
 * (about 3 KB a slot, 18 MB of a 78 MB heap at 1,000 instances).
 */
function metadataOutsideVersion(object: KubernetesObject | undefined): string {
  const { uid, labels, annotations, ownerReferences, finalizers } = object?.metadata ?? {};
  return crypto
    .createHash('sha256')
    .update(stableStringify([uid, labels, annotations, ownerReferences, finalizers]))
    .digest('base64');
}
