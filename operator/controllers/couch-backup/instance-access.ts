import type { CoreV1Api, V1Pod, V1Secret } from '@kubernetes/client-node';
import { ADMIN_SECRET_KEYS, adminSecretName } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { podAddress } from '../../../api/pod-address.js';
import { callKube, isNotFound } from '../../../kube/errors.js';
import type { Informer } from '../../../kube/informer.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';

/**
 * The instance's CouchDB at its pod, with its admin credentials, from the operator's caches: a
 * backup reads there, never through the gateway, so it records no activity and wakes nothing.
 */
export function connectionTo(
  informers: { pods: Informer<V1Pod>; secrets: Informer<V1Secret> },
  instance: CouchInstance,
): { origin: string; credentials: { username: string; password: string } } {
  const namespace = instance.metadata.namespace ?? '';
  const name = instance.metadata.name ?? '';
  const pod = informers.pods.get({ namespace, name: couchInstanceNames(name).pod });
  const address = pod && podAddress(pod);
  if (!address) throw new Error(`instance ${name} has no running pod to read from`);
  const secret = informers.secrets.get({ namespace, name: adminSecretName(name) });
  if (!secret) throw new Error(`Secret ${adminSecretName(name)} with the admin credentials is missing`);
  const decode = (field: string): string =>
    Buffer.from(secret.data?.[field] ?? '', 'base64').toString('utf8');
  return {
    origin: address.origin,
    credentials: {
      username: decode(ADMIN_SECRET_KEYS.username),
      password: decode(ADMIN_SECRET_KEYS.password),
    },
  };
}

/**
 * A tenant's storage Secret (an instance's addons.backups.storageSecret, or the one a backup was
 * written with), read by name in the instance's own namespace only (the Secret is the tenant's,
 * not the operator's, so it is not cached); undefined when none is named or it is missing.
 */
export async function readStorageSecret(
  core: CoreV1Api,
  ref: { namespace: string; name: string | undefined },
): Promise<V1Secret | undefined> {
  const { namespace, name } = ref;
  if (name === undefined) return undefined;
  try {
    return await callKube(() => core.readNamespacedSecret({ namespace, name }));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
