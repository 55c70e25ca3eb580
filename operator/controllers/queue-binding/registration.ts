import type { V1Secret } from '@kubernetes/client-node';
import { SETTEE_API_VERSION } from '../../../api/contract.js';
import { QUEUE_BINDING_KIND, QUEUE_BINDING_PLURAL, type QueueBinding } from '../../../api/queue-binding.js';
import type { InformerFactory } from '../../../kube/informer-factory.js';
import type { WatchedResource } from '../../../kube/resource-path.js';
import type { ControllerRegistration } from '../registration.js';
import { ownerKeys, ownKey } from '../../../kube/controller-runtime/key-mappers.js';
import { isSpecOrMetadataChange } from '../../../kube/controller-runtime/predicates.js';
import { QUEUE_OWNED_SELECTOR } from '../../resources/queue-binding/labels.js';
import { QueueBindingReconciler, type QueueBindingInformers } from './reconciler.js';

export const QUEUE_BINDING_RESOURCE: WatchedResource = {
  apiVersion: SETTEE_API_VERSION,
  kind: QUEUE_BINDING_KIND,
  plural: QUEUE_BINDING_PLURAL,
};

export function queueBindingInformers(informers: InformerFactory): QueueBindingInformers {
  return {
    bindings: informers.informerFor<QueueBinding>(QUEUE_BINDING_RESOURCE),
    envSecrets: informers.informerFor<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      labelSelector: QUEUE_OWNED_SELECTOR,
    }),
  };
}

/**
 * The watch graph: a binding's own changes (spec, labels, the rotation annotation; not its status)
 * and any change to its env Secret (edited or deleted by hand: it is written again) become the
 * binding's key. The tenant's password Secret is read on each pass, not watched.
 */
export const queueBindingController: ControllerRegistration = {
  name: 'queue-binding',
  create({ informers, clients, events, config }) {
    const watched = queueBindingInformers(informers);
    return {
      reconciler: new QueueBindingReconciler({
        informers: watched,
        clients,
        events,
        config: config.queueBinding,
      }),
      primary: watched.bindings,
      watches: [
        { informer: watched.bindings, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
        {
          informer: watched.envSecrets,
          toKeys: ownerKeys({ apiVersion: SETTEE_API_VERSION, kind: QUEUE_BINDING_KIND }),
        },
      ],
    };
  },
};
