import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { buildOwnerReference } from '../owner-reference.js';
import { buildCommonLabels } from './labels.js';

/** The metadata of every object an instance owns: its namespace, the common labels, the controller reference. */
export function buildOwnedMetadata(instance: CouchInstance, name: string): V1ObjectMeta {
  return {
    name,
    namespace: instance.metadata.namespace,
    labels: buildCommonLabels(instance.metadata.name ?? ''),
    ownerReferences: [buildOwnerReference(instance)],
  };
}
