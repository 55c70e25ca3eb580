import type { V1Pod } from '@kubernetes/client-node';
import { ADMIN_SECRET_KEYS, adminSecretName } from '../../api/contract.js';
import type { CouchDbContainer, CouchEngineAdmin, CouchEngineKind } from '../couch-engine/index.js';
import { readContainerInputs } from './container-inputs.js';
import { MissingEngineInputError, type PodReferences } from './pod-references.js';
import { stableAdminHash } from './stable-admin-hash.js';

export { MissingEngineInputError, type PodReferences } from './pod-references.js';

/**
 * What the stand-in hands the engine of one pod: to Apache CouchDB, the container's own files and
 * environment, as the official image gets them; to the pouchdb-server stand-in (which reads neither
 * ini files nor PBKDF2-SHA256), an admin and the server uuid.
 */
export type EngineInputs =
  | { kind: 'apache-couchdb'; container: CouchDbContainer }
  | { kind: 'pouchdb-server'; admin: CouchEngineAdmin; uuid: string | undefined };

/** The inputs of `kind` for the pod of instance `instance`. */
export function readEngineInputs(
  references: PodReferences,
  pod: V1Pod,
  options: { instance: string; kind: CouchEngineKind },
): EngineInputs {
  if (options.kind === 'apache-couchdb') {
    return { kind: 'apache-couchdb', container: readContainerInputs(references, pod) };
  }
  return { kind: 'pouchdb-server', ...readStandInInputs(references, pod, options.instance) };
}

/**
 * For the pouchdb-server stand-in: reads the admin credentials from the instance's admin Secret and the `[couchdb] uuid` from the
 * ConfigMaps the pod mounts, from watch caches as a kubelet does: nothing on the wake path waits
 * for an API read. The engine gets the admin as a hash salted by the uid of the pod's controller
 * (its StatefulSet, which outlives each pod; see stableAdminHash), not the operator's own [admins]
 * line: that one is PBKDF2-SHA256, which the pouchdb-server stand-in cannot read.
 */
function readStandInInputs(
  references: PodReferences,
  pod: V1Pod,
  instance: string,
): { admin: CouchEngineAdmin; uuid: string | undefined } {
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
