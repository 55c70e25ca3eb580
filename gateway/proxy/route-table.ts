import { SETTEE_API_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';
import type { Informer } from '../../kube/informer.js';
import type { InformerFactory } from '../../kube/informer-factory.js';
import type { WatchedResource } from '../../kube/resource-path.js';
import { InstanceDeletingError, UnknownInstanceError } from '../http/errors.js';
import type { InstanceRef } from '../instance-ref.js';

export const COUCH_INSTANCE_RESOURCE: WatchedResource = {
  apiVersion: SETTEE_API_VERSION,
  kind: COUCH_INSTANCE_KIND,
  plural: COUCH_INSTANCE_PLURAL,
};

/** Called on every change of an instance; `instance` is undefined once it is deleted. */
export type InstanceChangeListener = (ref: InstanceRef, instance: CouchInstance | undefined) => void;

/**
 * Which instances exist, from the CouchInstance informer's cache: a request costs a map lookup,
 * never an API call.
 */
export class RouteTable {
  private readonly informer: Informer<CouchInstance>;

  constructor(informers: InformerFactory) {
    this.informer = informers.informerFor<CouchInstance>(COUCH_INSTANCE_RESOURCE);
  }

  /** The instance a request names; throws the 404 errors for one that does not exist or is being deleted. */
  resolve(ref: InstanceRef): CouchInstance {
    const instance = this.informer.get(ref);
    if (!instance) throw new UnknownInstanceError(ref);
    if (instance.metadata.deletionTimestamp) throw new InstanceDeletingError(ref);
    return instance;
  }

  /** The cached object, whatever its state. */
  get(ref: InstanceRef): CouchInstance | undefined {
    return this.informer.get(ref);
  }

  onChange(listener: InstanceChangeListener): () => void {
    return this.informer.onEvent((event) => {
      const { namespace = '', name = '' } = event.object.metadata;
      listener({ namespace, name }, event.type === 'delete' ? undefined : event.object);
    });
  }
}
