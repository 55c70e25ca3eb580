import fs from 'node:fs/promises';
import path from 'node:path';
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { callKube, isAlreadyExists, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer.js';
import { parseObjectKey, type ObjectKey } from '../../kube/controller-runtime/object-key.js';
import { DONE, type ReconcileResult, type Reconciler } from '../../kube/controller-runtime/reconciler.js';

/** The provisioner name of the local StorageClass (what external-provisioner sidecars are called by). */
export const LOCAL_PROVISIONER = 'settee.dev/local-volume';
/** The local cluster's default StorageClass, which the control plane installs. */
export const LOCAL_STORAGE_CLASS = 'settee-local';
/** Marks the PersistentVolumes the local provisioner made. */
export const LOCAL_VOLUME_LABEL = 'settee.dev/local-volume';

/** Set on a claim by the scheduler: the node its first pod goes to. */
const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';
const PROVISIONER_ANNOTATIONS = [
  'volume.kubernetes.io/storage-provisioner',
  'volume.beta.kubernetes.io/storage-provisioner',
];
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The StorageClass: the default one, expansion allowed, Delete on release, and bound when the
 * first pod that uses a claim is scheduled (WaitForFirstConsumer, as kind's and minikube's local
 * classes are): the scheduler picks the node with every other constraint in view and the volume
 * follows it, so a claim is never bound to a node its pod cannot run on, and the scheduler never
 * backs off on a claim that is not bound yet.
 */
export function buildLocalStorageClass(): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: LOCAL_STORAGE_CLASS,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    },
    provisioner: LOCAL_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
  };
}

/** The folder of a volume under the volumes root: one per PersistentVolume, named after it. */
export function volumeFolder(root: string, volumeName: string): string {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(volumeName)) throw new Error(`unexpected volume name ${volumeName}`);
  return path.join(root, volumeName);
}

export interface LocalVolumesOptions {
  claims: Informer<V1PersistentVolumeClaim>;
  volumes: Informer<V1PersistentVolume>;
  storageClasses: Informer<V1StorageClass>;
  core: CoreV1Api;
  /** Each volume is a folder here. */
  root: string;
  /** Only claims of this namespace (tests); undefined = every namespace. */
  namespace?: string | undefined;
}

/**
 * LOCAL PLATFORM AND TESTS ONLY: the external provisioner and resizer of the local StorageClass.
 * For a claim the PV controller hands to LOCAL_PROVISIONER it makes a folder and a hostPath
 * PersistentVolume on the node the scheduler selected (node affinity, so later pods of the claim go
 * there too), bound to that claim (named pvc-<claim uid>, so a new claim of an old name never
 * sees old data); it grows a bound volume when its claim asks for more; and a Released volume
 * whose reclaim policy is Delete loses its folder and its object (Retain keeps both). Keys: a
 * claim's `<namespace>/<name>`, and `volume:<name>` for a volume.
 */
export class LocalVolumes implements Reconciler {
  constructor(private readonly options: LocalVolumesOptions) {}

  async reconcile(key: ObjectKey): Promise<ReconcileResult> {
    if (key.startsWith('volume:')) return this.reconcileVolume(key.slice('volume:'.length));
    return this.reconcileClaim(key);
  }

  private async reconcileClaim(key: ObjectKey): Promise<ReconcileResult> {
    const claim = this.options.claims.get(parseObjectKey(key));
    if (!claim || claim.metadata?.deletionTimestamp) return DONE;
    const volumeName = claim.spec?.volumeName;
    if (volumeName) return this.expand(claim, volumeName);
    const annotations = claim.metadata?.annotations ?? {};
    if (!PROVISIONER_ANNOTATIONS.some((a) => annotations[a] === LOCAL_PROVISIONER)) return DONE;
    await this.provision(claim);
    return DONE;
  }

  private async provision(claim: V1PersistentVolumeClaim): Promise<void> {
    const { namespace = '', name = '', uid = '' } = claim.metadata ?? {};
    const volumeName = `pvc-${uid}`;
    const folder = volumeFolder(this.options.root, volumeName);
    await fs.mkdir(folder, { recursive: true });
    const className = claim.spec?.storageClassName ?? LOCAL_STORAGE_CLASS;
    const storageClass = this.options.storageClasses.get({ name: className });
    const node = claim.metadata?.annotations?.[SELECTED_NODE_ANNOTATION];
    const body: V1PersistentVolume = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: volumeName,
        labels: { [LOCAL_VOLUME_LABEL]: 'true' },
        annotations: { 'pv.kubernetes.io/provisioned-by': LOCAL_PROVISIONER },
      },
      spec: {
        capacity: { storage: String(claim.spec?.resources?.requests?.storage ?? '1Gi') },
        accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: storageClass?.reclaimPolicy ?? 'Delete',
        storageClassName: className,
        volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
        hostPath: { path: folder, type: 'DirectoryOrCreate' },
        ...(node
          ? {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
                  ],
                },
              },
            }
          : {}),
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name, uid },
      },
    };
    try {
      await callKube(() => this.options.core.createPersistentVolume({ body }));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  /** The resizer's part: a claim that asks for more than its volume has grows it, at once. */
  private async expand(claim: V1PersistentVolumeClaim, volumeName: string): Promise<ReconcileResult> {
    const volume = this.options.volumes.get({ name: volumeName });
    if (!volume?.metadata?.labels?.[LOCAL_VOLUME_LABEL]) return DONE;
    const requested = claim.spec?.resources?.requests?.storage;
    const capacity = claim.status?.capacity?.storage;
    if (!requested || requested === capacity) return DONE;
    if (volume.spec?.capacity?.storage !== requested) {
      await callKube(() =>
        this.options.core.patchPersistentVolume(
          { name: volumeName, body: { spec: { capacity: { storage: requested } } } },
          mergePatch,
        ),
      );
    }
    const { namespace = '', name = '' } = claim.metadata ?? {};
    await callKube(() =>
      this.options.core.patchNamespacedPersistentVolumeClaimStatus(
        { namespace, name, body: { status: { capacity: { storage: requested }, conditions: [] } } },
        mergePatch,
      ),
    );
    return DONE;
  }

  private async reconcileVolume(name: string): Promise<ReconcileResult> {
    const volume = this.options.volumes.get({ name });
    if (!volume?.metadata?.labels?.[LOCAL_VOLUME_LABEL] || volume.metadata.deletionTimestamp) return DONE;
    const claimNamespace = volume.spec?.claimRef?.namespace;
    if (this.options.namespace && claimNamespace !== this.options.namespace) return DONE;
    if (volume.status?.phase !== 'Released' || volume.spec?.persistentVolumeReclaimPolicy !== 'Delete') {
      return DONE;
    }
    await fs.rm(volumeFolder(this.options.root, name), { recursive: true, force: true });
    try {
      await callKube(() => this.options.core.deletePersistentVolume({ name }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return DONE;
  }
}

/** The local path behind a bound claim, or why there is none yet. */
export function claimFolder(
  claims: Informer<V1PersistentVolumeClaim>,
  volumes: Informer<V1PersistentVolume>,
  ref: { namespace: string; name: string },
): { folder: string } | { waiting: string } {
  const claim = claims.get(ref);
  if (!claim) return { waiting: `persistentvolumeclaim "${ref.name}" not found` };
  const volumeName = claim.spec?.volumeName;
  const volume = volumeName ? volumes.get({ name: volumeName }) : undefined;
  if (!volume || claim.status?.phase !== 'Bound') {
    return { waiting: `persistentvolumeclaim "${ref.name}" is not bound yet` };
  }
  const folder = volume.spec?.hostPath?.path ?? volume.spec?.local?.path;
  if (!folder) return { waiting: `volume ${volumeName} is neither hostPath nor local` };
  return { folder };
}
