import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import { ADMIN_SECRET_KEYS, adminSecretName } from '../../api/contract.js';
import type { CouchEngineAdmin } from '../couch-engine/index.js';
import { stableAdminHash } from './stable-admin-hash.js';

/** What a kubelet would hand the CouchDB container: its admin, and the server uuid from its ini. */
export interface EngineInputs {
  admin: CouchEngineAdmin;
  uuid: string | undefined;
}

export class MissingEngineInputError extends Error {
  readonly code = 'MISSING_ENGINE_INPUT';
  constructor(message: string) {
    super(message);
    this.name = 'MissingEngineInputError';
  }
}

/** Where a kubelet finds what a pod references: its watch caches. */
export interface PodReferences {
  secret(ref: { namespace: string; name: string }): V1Secret | undefined;
  configMap(ref: { namespace: string; name: string }): V1ConfigMap | undefined;
}

/**
 * Reads the admin credentials from the instance's admin Secret and the `[couchdb] uuid` from the
 * ConfigMaps the pod mounts, from watch caches as a kubelet does: nothing on the wake path waits
 * for an API read. The engine gets the admin as a hash salted by the uid of the pod's controller
 * (its StatefulSet, which outlives each pod; see stableAdminHash), not the operator's own [admins]
 * line: that one is PBKDF2-SHA256, which the pouchdb-server stand-in cannot read.
 */
export function readEngineInputs(references: PodReferences, pod: V1Pod, instance: string): EngineInputs {
  const namespace = pod.metadata?.namespace ?? '';
  const secretName = adminSecretName(instance);
  const secret = references.secret({ namespace, name: secretName });
  if (!secret) throw new MissingEngineInputError(`Secret ${namespace}/${secretName} is not there (yet)`);
  const decode = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
  };
  const username = decode(ADMIN_SECRET_KEYS.username);
  const password = decode(ADMIN_SECRET_KEYS.password);
  if (!username || !password) {
    throw new MissingEngineInputError(`Secret ${namespace}/${secretName} has no username or password`);
  }
  let uuid: string | undefined;
  for (const name of mountedConfigMaps(pod)) {
    const configMap = references.configMap({ namespace, name });
    if (!configMap) throw new MissingEngineInputError(`ConfigMap ${namespace}/${name} is not there (yet)`);
    for (const text of Object.values(configMap.data ?? {})) uuid = iniValue(text, 'couchdb', 'uuid') ?? uuid;
  }
  const controller = pod.metadata?.ownerReferences?.find((owner) => owner.controller);
  const identity = controller?.uid ?? pod.metadata?.uid ?? `${namespace}/${instance}`;
  return { admin: { username, password: stableAdminHash(password, identity) }, uuid };
}

function mountedConfigMaps(pod: V1Pod): string[] {
  const names = new Set<string>();
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.configMap?.name) names.add(volume.configMap.name);
    for (const source of volume.projected?.sources ?? []) {
      if (source.configMap?.name) names.add(source.configMap.name);
    }
  }
  return [...names];
}

/** The value of `key` in `[section]` of an ini text, as CouchDB reads its local.d files. */
export function iniValue(text: string, section: string, key: string): string | undefined {
  let current = '';
  let found: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';')) continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      current = header[1] ?? '';
      continue;
    }
    const eq = line.indexOf('=');
    if (current === section && eq > 0 && line.slice(0, eq).trim() === key) found = line.slice(eq + 1).trim();
  }
  return found;
}
