import type { V1ConfigMap } from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { AdminHashScheme } from './admin-password-hash.js';
import { withAppliedDigest } from '../applied-digest.js';
import { couchInstanceNames } from './names.js';
import { buildOwnedMetadata } from './owned-metadata.js';

/** The ConfigMap key holding CouchDB's ini, mounted into local.d. */
export const COUCHDB_INI_KEY = 'settee.ini';

export interface CouchDbIniInput {
  /** [couchdb] uuid: the server's identity, fixed for the instance's lifetime. */
  serverUuid: string;
  adminUsername: string;
  /** Already hashed (computeAdminPasswordHash): the ConfigMap never holds a password. */
  adminPasswordHash: string;
  hashScheme: AdminHashScheme;
  /** vendor.name in the root document. */
  vendorName: string;
}

/** The server's uuid: the instance UID without dashes, so it survives every restart and wake. */
export function serverUuidOf(instance: CouchInstance): string {
  return (instance.metadata.uid ?? '').replaceAll('-', '');
}

/** CouchDB's configuration for one instance. Sections start with the keys the image's entrypoint greps for. */
export function buildCouchDbIni(input: CouchDbIniInput): string {
  const vendorName = input.vendorName.replace(/[\r\n]/g, ' ');
  return [
    '; Written by the Settee operator; do not edit.',
    '[couchdb]',
    `uuid = ${input.serverUuid}`,
    'single_node = true',
    '',
    // One copy of each shard: the default (3) asks one node for three, which CouchDB refuses and
    // cuts to one with an error in its log for each system database it makes at first start.
    '[cluster]',
    'n = 1',
    '',
    '[chttpd]',
    'bind_address = 0.0.0.0',
    `port = ${COUCHDB_PORT}`,
    '',
    '[vendor]',
    `name = ${vendorName}`,
    '',
    '[chttpd_auth]',
    // Pinned to the admin hash's own parameters: CouchDB 3.4+ re-hashes (and rewrites its ini, which
    // is read-only here) when they differ from its defaults.
    `pbkdf2_prf = ${input.hashScheme.digest}`,
    `iterations = ${input.hashScheme.iterations}`,
    '',
    '[admins]',
    `${input.adminUsername} = ${input.adminPasswordHash}`,
    '',
  ].join('\n');
}

export function buildCouchDbConfigMap(instance: CouchInstance, ini: CouchDbIniInput): V1ConfigMap {
  const name = instance.metadata.name ?? '';
  return withAppliedDigest<V1ConfigMap>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: buildOwnedMetadata(instance, couchInstanceNames(name).configMap),
    data: { [COUCHDB_INI_KEY]: buildCouchDbIni(ini) },
  });
}
