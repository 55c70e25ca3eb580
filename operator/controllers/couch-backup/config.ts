import type { EnvReader } from '../../../observability/env-reader.js';
import type { ObjectStorageTarget } from '../../backup/object-storage.js';

/** The backups' section of the operator's configuration (docs/backups.md lists the variables). */
export interface BackupConfig {
  /**
   * The cluster's object storage: SETTEE_BACKUP_S3_BUCKET (unset: none; then only instances with
   * their own storageSecret can be backed up), SETTEE_BACKUP_S3_ENDPOINT (unset: AWS S3),
   * SETTEE_BACKUP_S3_REGION (us-east-1), SETTEE_BACKUP_S3_PREFIX (""), SETTEE_BACKUP_S3_FORCE_PATH_STYLE
   * (false), SETTEE_BACKUP_S3_ACCESS_KEY_ID and SETTEE_BACKUP_S3_SECRET_ACCESS_KEY (from a Secret).
   */
  readonly storage: ObjectStorageTarget | undefined;
  /** SETTEE_BACKUP_REQUEST_TIMEOUT (30s): how long one CouchDB or object-storage request may wait for an answer. */
  readonly requestTimeoutMs: number;
  /** SETTEE_BACKUP_ATTEMPTS (3): tries of one backup before it is Failed; at least 1. */
  readonly attempts: number;
  /** SETTEE_BACKUP_RETRY_DELAY (15s): wait after the first failed try, doubling after each. */
  readonly retryDelayMs: number;
}

export function normalizePrefix(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, '');
}

export function readBackupConfig(read: EnvReader): BackupConfig {
  const bucket = read.optionalString('SETTEE_BACKUP_S3_BUCKET');
  const endpoint = read.optionalString('SETTEE_BACKUP_S3_ENDPOINT');
  if (endpoint !== undefined && !URL.canParse(endpoint))
    read.problem(`SETTEE_BACKUP_S3_ENDPOINT=${endpoint}: expected a URL such as https://s3.example.com`);
  const accessKeyId = read.optionalString('SETTEE_BACKUP_S3_ACCESS_KEY_ID');
  const secretAccessKey = read.optionalString('SETTEE_BACKUP_S3_SECRET_ACCESS_KEY');
  if (bucket !== undefined && (accessKeyId === undefined || secretAccessKey === undefined))
    read.problem(
      'SETTEE_BACKUP_S3_BUCKET is set: SETTEE_BACKUP_S3_ACCESS_KEY_ID and SETTEE_BACKUP_S3_SECRET_ACCESS_KEY must be too',
    );
  const storage: ObjectStorageTarget | undefined =
    bucket === undefined
      ? undefined
      : {
          endpoint,
          bucket,
          region: read.string('SETTEE_BACKUP_S3_REGION', 'us-east-1'),
          prefix: normalizePrefix(read.string('SETTEE_BACKUP_S3_PREFIX', '')),
          forcePathStyle: read.boolean('SETTEE_BACKUP_S3_FORCE_PATH_STYLE', false),
          accessKeyId: accessKeyId ?? '',
          secretAccessKey: secretAccessKey ?? '',
        };
  return {
    storage,
    requestTimeoutMs: read.durationMs('SETTEE_BACKUP_REQUEST_TIMEOUT', 30_000, { minMs: 1 }),
    attempts: read.integer('SETTEE_BACKUP_ATTEMPTS', 3, { min: 1, max: 20 }),
    retryDelayMs: read.durationMs('SETTEE_BACKUP_RETRY_DELAY', 15_000, { minMs: 1 }),
  };
}
