import type { V1OwnerReference } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';
import { QUEUE_BINDING_KIND, type QueueBinding } from '../../api/queue-binding.js';

/** The controller reference of the env Secret: it goes when its binding goes. */
export function buildQueueBindingOwnerReference(binding: QueueBinding): V1OwnerReference {
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: QUEUE_BINDING_KIND,
    name: binding.metadata.name ?? '',
    uid: binding.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
