import type { V1Secret } from '@kubernetes/client-node';
import { STORAGE_SECRET_KEYS } from '../../../api/couch-backup.js';
import type { ObjectStorageTarget } from '../../backup/object-storage.js';
import { normalizePrefix } from './config.js';

/** The instance's object storage cannot be worked out; the message says what to fix. */
export class StorageTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageTargetError';
  }
}

/**
 * Where one instance's backups go: the Secret its spec names (read from the instance's own
 * namespace only, so no tenant can point at another's), else the cluster's object storage.
 */
export function resolveStorageTarget(options: {
  cluster: ObjectStorageTarget | undefined;
  secretName: string | undefined;
  /** The named Secret from the instance's namespace; undefined when it does not exist. */
  secret: V1Secret | undefined;
  namespace: string;
}): ObjectStorageTarget {
  const { cluster, secretName, secret, namespace } = options;
  if (secretName === undefined) {
    if (cluster) return cluster;
    throw new StorageTargetError(
      'no object storage: the operator has none configured (SETTEE_BACKUP_S3_BUCKET) and the instance names no ' +
        'addons.backups.storageSecret',
    );
  }
  if (!secret) throw new StorageTargetError(`Secret ${secretName} not found in namespace ${namespace}`);
  const value = (key: string): string | undefined => {
    const encoded = secret.data?.[key];
    return encoded === undefined ? secret.stringData?.[key] : Buffer.from(encoded, 'base64').toString('utf8');
  };
  const missing = [
    STORAGE_SECRET_KEYS.bucket,
    STORAGE_SECRET_KEYS.accessKeyId,
    STORAGE_SECRET_KEYS.secretAccessKey,
  ].filter((key) => !value(key));
  if (missing.length > 0) throw new StorageTargetError(`Secret ${secretName} has no ${missing.join(', ')}`);
  const endpoint = value(STORAGE_SECRET_KEYS.endpoint) || undefined;
  if (endpoint !== undefined && !URL.canParse(endpoint))
    throw new StorageTargetError(`Secret ${secretName}: endpoint is not a URL`);
  return {
    endpoint,
    bucket: value(STORAGE_SECRET_KEYS.bucket) ?? '',
    region: value(STORAGE_SECRET_KEYS.region) || 'us-east-1',
    prefix: normalizePrefix(value(STORAGE_SECRET_KEYS.prefix) ?? ''),
    forcePathStyle: value(STORAGE_SECRET_KEYS.forcePathStyle) === 'true',
    accessKeyId: value(STORAGE_SECRET_KEYS.accessKeyId) ?? '',
    secretAccessKey: value(STORAGE_SECRET_KEYS.secretAccessKey) ?? '',
  };
}
