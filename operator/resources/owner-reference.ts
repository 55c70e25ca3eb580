import type { V1OwnerReference } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';

/** A Settee resource that owns objects: a CouchInstance or a QueueBinding. */
export interface SetteeOwner {
  kind: string;
  metadata: { name?: string; uid?: string };
}

/**
 * The controller reference every owned object carries: garbage collection deletes the object with
 * its owner, and informer events on it map back to the owner's key.
 */
export function buildOwnerReference(owner: SetteeOwner): V1OwnerReference {
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
