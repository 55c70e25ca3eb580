import type { KubernetesObject } from '../kubernetes-object.js';
import { LABEL_INSTANCE } from '../../api/contract.js';
import { objectKey, objectKeyOf, type ObjectKey } from './object-key.js';

/** Which keys to reconcile when an object changes. */
export type KeyMapper<T extends KubernetesObject = KubernetesObject> = (object: T) => readonly ObjectKey[];

/** For the controller's own kind: the object's own key. */
export const ownKey: KeyMapper = (object) => {
  const key = objectKeyOf(object);
  return key ? [key] : [];
};

export interface OwnerKind {
  /** `group/version` of the owner; matched by group only, so a version bump keeps the mapping. */
  apiVersion: string;
  kind: string;
}

export interface OwnerKeysOptions {
  /** Label whose value names the owner in the same namespace, for objects without a controller ref (e.g. the gateway's activity Lease). */
  label?: string;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * For owned objects: the key of the owner of kind `owner`, found through the controller owner
 * reference, else through the `settee.dev/instance` label (or `options.label`). Owners live in
 * the owned object's namespace (owner references cannot cross namespaces).
 */
export function ownerKeys(owner: OwnerKind, options: OwnerKeysOptions = {}): KeyMapper {
  const label = options.label ?? LABEL_INSTANCE;
  const group = groupOf(owner.apiVersion);
  return (object) => {
    const namespace = object.metadata?.namespace;
    const controllerRef = object.metadata?.ownerReferences?.find(
      (ref) => ref.controller === true && ref.kind === owner.kind && groupOf(ref.apiVersion) === group,
    );
    if (controllerRef) return [objectKey({ namespace, name: controllerRef.name })];
    const labelled = object.metadata?.labels?.[label];
    return labelled ? [objectKey({ namespace, name: labelled })] : [];
  };
}
