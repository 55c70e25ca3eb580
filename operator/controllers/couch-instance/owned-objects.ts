import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { applyObject, FIELD_MANAGER } from '../../../kube/apply.js';
import type { KubeClients } from '../../../kube/clients.js';
import { callKube, isAlreadyExists } from '../../../kube/errors.js';
import { isWrittenBy, isWrittenOnlyBy } from '../../../kube/field-writers.js';
import { holdsFields } from '../../../kube/holds-fields.js';
import type { Informer } from '../../../kube/informer.js';
import type { WatchSource } from '../../../kube/controller-runtime/controller.js';
import type { KeyMapper } from '../../../kube/controller-runtime/key-mappers.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import {
  buildAdminSecret,
  readBoundAdminHash,
  readCredentials,
  type InstanceCredentials,
} from '../../resources/couch-instance/admin-secret.js';
import {
  adminPasswordSalt,
  bindAdminHash,
  boundAdminHashFor,
  computeAdminPasswordHash,
  type AdminHashScheme,
} from '../../resources/couch-instance/admin-password-hash.js';
import { appliedDigestOf, replicasOf } from '../../resources/applied-digest.js';
import type { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import { generateCredentials } from './generate-credentials.js';
import { ScaleFallback } from './scale-fallback.js';

/**
 * Reads and writes the objects an instance owns: from the informer caches (overlaid with this
 * controller's recent writes), and to the API unless the object is still exactly what this
 * controller last wrote and that write carried the desired content (its applied-digest
 * annotation), so a reconcile with nothing to do makes no request. After a restart, with no writes
 * of its own remembered, an object the operator wrote (its field manager in managedFields), whose
 * last write carried the desired content (the digest) and which still holds every field the
 * desired object sets (holdsFields) is not applied again either: the apply would change nothing
 * (at 500 instances a restart re-applied 2,500 objects that changed nothing). A StatefulSet's
 * cached copy has no pod template to compare: it is taken as held when no other client wrote it
 * (holdsDesired). Any other version (a hand edit such as `kubectl scale`, or one this process
 * never wrote) is applied again: the spec wins, and an apply that changes nothing costs one
 * request and no write.
 */
export class OwnedObjects {
  private readonly scaleFallback: ScaleFallback;

  constructor(
    private readonly clients: KubeClients,
    private readonly recent: RecentWrites,
    logger: Logger,
  ) {
    this.scaleFallback = new ScaleFallback(logger);
  }

  current<T extends KubernetesObject>(
    owner: ObjectKey,
    informer: Informer<T>,
    namespace: string,
    name: string,
  ): T | undefined {
    return this.recent.read(owner, slotOf(informer, name), informer.get({ namespace, name }));
  }

  /**
   * The watch source of objects this controller writes, mapped to their owners: an event that shows
   * an owner's last write of the object (RecentWrites.observeEvent, which then drops the write's
   * copy, the cache holding it now) wakes nothing; the reconcile that wrote it went on with the answer.
   * An event that arrives before its write's answer is decided when the answer comes.
   */
  watchSource<T extends KubernetesObject>(informer: Informer<T>, toOwner: KeyMapper): WatchSource<T> {
    return {
      informer,
      toKeys: toOwner,
      isOwnWrite: (object) => {
        const slot = slotOf(informer, object.metadata?.name ?? '');
        const answers = toOwner(object).map((owner) => this.recent.observeEvent(owner, slot, object));
        if (answers.includes(true)) return true;
        // A write of the slot in flight: decided once it is answered (RecentWrites.write).
        const held = answers.filter((answer) => answer instanceof Promise);
        return held.length === 0 ? false : Promise.all(held).then((owns) => owns.includes(true));
      },
    };
  }

  /**
   * Server-side applies `desired` unless the current object is this controller's own write of it.
   * When that write differs from `desired` in its replicas alone (a wake, a hibernation), only they
   * are applied, through the scale subresource, on the condition that the object is still the
   * version the cache holds: the API server then handles a Scale, not the whole pod template, which
   * is most of a wake's scale step. The applied digest leaves replicas out, so it stays true.
   */
  async apply<T extends KubernetesObject>(owner: ObjectKey, informer: Informer<T>, desired: T): Promise<T> {
    const { namespace = '', name = '' } = desired.metadata ?? {};
    const slot = slotOf(informer, name);
    const existing = this.current(owner, informer, namespace, name);
    const unchanged =
      existing !== undefined &&
      appliedDigestOf(existing) === appliedDigestOf(desired) &&
      (this.recent.isOwnLastWrite(owner, slot, existing) || holdsDesired(informer, existing, desired));
    const replicas = replicasOf(desired);
    if (unchanged && replicasOf(existing) === replicas) return existing;
    const scalable = unchanged && replicas !== undefined && existing.metadata?.resourceVersion;
    if (scalable && this.scaleFallback.triesScale()) {
      const scaled = await this.scale(owner, slot, existing, replicas).catch((err: unknown) => {
        // Written since the cache's version, or a role without the Scale's rule: applied whole below.
        if (this.scaleFallback.appliesWholeAfterScaleFailure(err)) return undefined;
        throw err;
      });
      if (scaled) return scaled;
    }
    return this.recent.write(owner, slot, existing, async () => {
      const applied = await callKube(() => applyObject(this.clients.objects, desired));
      informer.trim(applied);
      return applied;
    });
  }

  /**
   * `existing` with `replicas`, written through its scale subresource. The answer is a Scale, so
   * the object is `existing` as the API server stores it after that write: the precondition means
   * nothing else changed it, and a change of the spec raises the generation by one.
   */
  private scale<T extends KubernetesObject>(
    owner: ObjectKey,
    slot: string,
    existing: T,
    replicas: number,
  ): Promise<T> {
    const version = existing.metadata?.resourceVersion ?? '';
    return this.recent.write(owner, slot, existing, async () => {
      const { resourceVersion } = await callKube(() =>
        this.clients.objects.applyScale(existing, replicas, version),
      );
      const metadata = existing.metadata ?? {};
      return {
        ...existing,
        metadata: { ...metadata, resourceVersion, generation: (metadata.generation ?? 0) + 1 },
        spec: { ...(existing as { spec?: object }).spec, replicas },
      } as T;
    });
  }

  /**
   * The instance's credentials and the admin's PBKDF2 hash: read from its admin Secret, or generated
   * and written with a create (never an apply) when there is none, so an existing Secret can never be
   * overwritten, even when the cache has not seen it yet: the create then fails with AlreadyExists
   * and the Secret is read. The hash is made once per password, salt and scheme and kept in the
   * Secret (in the create's own body for new instances), so a reconcile that finds it, after a
   * restart too, runs no PBKDF2. The Secret is re-applied with the same credentials when its other
   * keys must change (the url, a hash for a new password or scheme).
   */
  async ensureCredentials(options: {
    owner: ObjectKey;
    informer: Informer<V1Secret>;
    instance: CouchInstance;
    secretName: string;
    endpoint: string;
    hashScheme: AdminHashScheme;
  }): Promise<{ credentials: InstanceCredentials; adminPasswordHash: string; created: boolean }> {
    const { owner, informer, instance, secretName, endpoint, hashScheme } = options;
    const namespace = instance.metadata.namespace ?? '';
    const salt = adminPasswordSalt(instance.metadata.uid ?? '');
    let existing = this.current(owner, informer, namespace, secretName);
    if (!existing) {
      const credentials = generateCredentials();
      const adminPasswordHash = await computeAdminPasswordHash({
        password: credentials.password,
        salt,
        scheme: hashScheme,
      });
      const body = buildAdminSecret({
        instance,
        credentials,
        endpoint,
        boundAdminHash: bindAdminHash(adminPasswordHash, credentials.password),
      });
      try {
        await this.recent.write(owner, slotOf(informer, secretName), undefined, async () => {
          const created = await callKube(() =>
            this.clients.core.createNamespacedSecret({ namespace, body, fieldManager: FIELD_MANAGER }),
          );
          informer.trim(created);
          return created;
        });
        return { credentials, adminPasswordHash, created: true };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        existing = await callKube(() =>
          this.clients.core.readNamespacedSecret({ name: secretName, namespace }),
        );
      }
    }
    const credentials = readCredentials(existing);
    const { password } = credentials;
    const adminPasswordHash =
      boundAdminHashFor(readBoundAdminHash(existing), { password, salt, scheme: hashScheme }) ??
      (await computeAdminPasswordHash({ password, salt, scheme: hashScheme }));
    const boundAdminHash = bindAdminHash(adminPasswordHash, password);
    await this.apply(owner, informer, buildAdminSecret({ instance, credentials, endpoint, boundAdminHash }));
    return { credentials, adminPasswordHash, created: false };
  }
}

/**
 * Whether `existing`, not remembered as this controller's own last write (after a restart), holds
 * `desired`: it was written by this operator and holds every field of `desired` its cache keeps
 * (holdsFields). A field the cache trims (a StatefulSet's pod template) cannot be compared: it is
 * taken as applied when the applied digest (compared by the caller) says the last write carried it
 * and no other client wrote the object since (isWrittenOnlyBy), as operators keeping a spec hash do.
 * At 2,000 instances a restart re-applied 2,000 StatefulSets that changed nothing. What this misses:
 * a hand edit that only removes a template field leaves no writer, and stays until the spec changes.
 */
function holdsDesired<T extends KubernetesObject>(informer: Informer<T>, existing: T, desired: T): boolean {
  const kept = structuredClone(desired);
  informer.trim(kept);
  if (!holdsFields(existing, fieldsOf(kept))) return false;
  return isDeepStrictEqual(kept, desired)
    ? isWrittenBy(existing, FIELD_MANAGER)
    : isWrittenOnlyBy(existing, FIELD_MANAGER);
}

/** An object's fields but its kind: a list's items, in the caches, carry no apiVersion and kind. */
function fieldsOf({ apiVersion: _apiVersion, kind: _kind, ...fields }: KubernetesObject): object {
  return fields;
}

function slotOf(informer: { resource: { kind: string } }, name: string): string {
  return `${informer.resource.kind}/${name}`;
}
