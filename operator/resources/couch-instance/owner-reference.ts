import type { V1OwnerReference } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_KIND, type CouchInstance } from '../../api/couch-instance.js';

/**
 * The controller reference every owned object carries: garbage collection deletes the object with
 * its instance, and informer events on it map back to the instance's key.
 */
export function buildOwnerReference(instance: CouchInstance): V1OwnerReference {
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: COUCH_INSTANCE_KIND,
    name: instance.metadata.name ?? '',
    uid: instance.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
