import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node';
import { compareQuantities } from '../../../api/quantity.js';
import { callKube, isNotFound, toKubeApiError } from '../../../kube/errors.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';

export type VolumeGrowthOutcome =
  | { result: 'unchanged' }
  | { result: 'requested'; from: string; to: string }
  | { result: 'refused'; message: string };

/**
 * Grows an instance's data volume when its spec asks for more than the StatefulSet's (immutable)
 * claim template gave it, by raising the PVC's storage request, which the StorageClass's expansion
 * then fulfils. Volumes never shrink. The sizes already confirmed are remembered, so a reconcile
 * reads the PVC only while the spec and the template disagree and the PVC has not been seen.
 */
export class VolumeGrowth {
  private readonly confirmed = new Map<ObjectKey, string>();

  constructor(private readonly core: CoreV1Api) {}

  async ensure(options: {
    key: ObjectKey;
    namespace: string;
    claimName: string;
    size: string;
  }): Promise<VolumeGrowthOutcome> {
    const { key, namespace, claimName, size } = options;
    if (this.confirmed.get(key) === size) return { result: 'unchanged' };
    let current: string | undefined;
    try {
      const claim = await callKube(() =>
        this.core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName }),
      );
      current = claim.spec?.resources?.requests?.storage as string | undefined;
    } catch (err) {
      // The StatefulSet controller creates the PVC with the pod; the template's new size applies then.
      if (isNotFound(err)) return { result: 'unchanged' };
      throw err;
    }
    if (current !== undefined && compareQuantities(current, size) >= 0) {
      this.confirmed.set(key, size);
      return { result: 'unchanged' };
    }
    try {
      await callKube(() =>
        this.core.patchNamespacedPersistentVolumeClaim(
          { namespace, name: claimName, body: { spec: { resources: { requests: { storage: size } } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        ),
      );
    } catch (err) {
      const apiError = toKubeApiError(err);
      // The StorageClass does not allow expansion, or the claim is not bound: a person must act.
      if (apiError && (apiError.statusCode === 403 || apiError.statusCode === 422)) {
        this.confirmed.set(key, size);
        return { result: 'refused', message: apiError.message };
      }
      throw err;
    }
    this.confirmed.set(key, size);
    return { result: 'requested', from: current ?? 'unknown', to: size };
  }

  forget(key: ObjectKey): void {
    this.confirmed.delete(key);
  }
}
