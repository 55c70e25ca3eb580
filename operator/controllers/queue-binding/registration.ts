import type { V1Secret } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../api/contract.js';
import { QUEUE_BINDING_KIND, QUEUE_BINDING_PLURAL, type QueueBinding } from '../../api/queue-binding.js';
import type { WatchedResource } from '../../kube/resource-path.js';
import type { ControllerRegistration } from '../../runtime/controller-registration.js';
import { ownerKeys, ownKey } from '../../runtime/key-mappers.js';
import { isSpecOrMetadataChange } from '../../runtime/predicates.js';
import { QUEUE_OWNED_SELECTOR } from '../../resources/queue-binding/labels.js';
import { QueueBindingReconciler } from './reconciler.js';

export const QUEUE_BINDING_RESOURCE: WatchedResource = {
  apiVersion: SETTEE_API_VERSION,
  kind: QUEUE_BINDING_KIND,
  plural: QUEUE_BINDING_PLURAL,
};

/**
 * The watch graph: a binding's own changes (spec, labels, the rotation annotation; not its status)
 * and any change to its env Secret (edited or deleted by hand: it is written again) become the
 * binding's key. The tenant's password Secret is read on each pass, not watched.
 */
export const queueBindingController: ControllerRegistration = {
  name: 'queue-binding',
  create({ informers, clients, events, config }) {
    const bindings = informers.informerFor<QueueBinding>(QUEUE_BINDING_RESOURCE);
    const envSecrets = informers.informerFor<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      labelSelector: QUEUE_OWNED_SELECTOR,
    });
    return {
      reconciler: new QueueBindingReconciler({
        informers: { bindings, envSecrets },
        clients,
        events,
        config: config.queueBinding,
      }),
      primary: bindings,
      watches: [
        { informer: bindings, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
        {
          informer: envSecrets,
          toKeys: ownerKeys({ apiVersion: SETTEE_API_VERSION, kind: QUEUE_BINDING_KIND }),
        },
      ],
    };
  },
};
