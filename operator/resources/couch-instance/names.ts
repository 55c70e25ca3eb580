import { adminSecretName, clientServiceName, headlessServiceName } from '../../../api/contract.js';

/**
 * The name of every object Settee creates for a CouchInstance, in one place. The Secret and the
 * Services are named in contract.ts because the gateway and tenants find them by name.
 */
export const couchInstanceNames = (instance: string) => ({
  adminSecret: adminSecretName(instance),
  configMap: `${instance}-config`,
  headlessService: headlessServiceName(instance),
  clientService: clientServiceName(instance),
  statefulSet: instance,
  /** The one pod of the StatefulSet. */
  pod: `${instance}-0`,
  /** The PVC the StatefulSet controller creates from the claim template. */
  dataVolumeClaim: `${DATA_VOLUME}-${instance}-0`,
});

/** The volume claim template's name, which is also the volume's name in the pod. */
export const DATA_VOLUME = 'data';
export const CONFIG_VOLUME = 'config';
