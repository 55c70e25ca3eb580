import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { SETTEE_API_VERSION } from './contract.js';
import type {
  COUCH_BACKUP_PHASES,
  COUCH_BACKUP_SPEC_SCHEMA,
  COUCH_BACKUP_STATUS_SCHEMA,
  COUCH_BACKUP_TRIGGERS,
} from './couch-backup-schema.js';
import type { Infer } from './crd-schema.js';

/**
 * CouchBackup: one backup of one CouchInstance, as CloudNativePG's Backup is of a Cluster. The
 * schedule driver creates one per scheduled run, the hibernation path one before scaling a changed
 * instance to zero, and a tenant one by hand for an on-demand backup. Owned by its instance (garbage
 * collected with it); what it recorded in the bucket stays there (see docs/backups.md).
 */

export const COUCH_BACKUP_KIND = 'CouchBackup';
export const COUCH_BACKUP_PLURAL = 'couchbackups';
export const COUCH_BACKUP_SINGULAR = 'couchbackup';
export const COUCH_BACKUP_SHORT_NAME = 'cbak';

export { COUCH_BACKUP_PHASES, COUCH_BACKUP_TRIGGERS } from './couch-backup-schema.js';
export type CouchBackupPhase = (typeof COUCH_BACKUP_PHASES)[number];
export type CouchBackupTrigger = (typeof COUCH_BACKUP_TRIGGERS)[number];

// The types are those of the CRD's schema (couch-backup-schema.ts), whose descriptions say what each
// field holds (kubectl explain cbak.status).
export type CouchBackupSpec = Infer<typeof COUCH_BACKUP_SPEC_SCHEMA>;
export type CouchBackupStatus = Infer<typeof COUCH_BACKUP_STATUS_SCHEMA>;

export interface CouchBackup {
  apiVersion: typeof SETTEE_API_VERSION;
  kind: typeof COUCH_BACKUP_KIND;
  metadata: V1ObjectMeta;
  spec: CouchBackupSpec;
  status?: CouchBackupStatus;
}

/** On every CouchBackup: how it came to be (the spec's trigger), for selecting by label. */
export const LABEL_BACKUP_TRIGGER = 'settee.dev/backup-trigger';
/** On scheduled CouchBackups: the cron time (RFC 3339) the run is for. */
export const ANNOTATION_SCHEDULED_FOR = 'settee.dev/scheduled-for';

/** Reasons of the Kubernetes Events about backups (recorded on the CouchBackup and on its instance). */
export const CouchBackupEventReason = {
  BackupStarted: 'BackupStarted',
  BackupCompleted: 'BackupCompleted',
  BackupFailed: 'BackupFailed',
  BackupSkipped: 'BackupSkipped',
  BackupDeleted: 'BackupDeleted',
} as const;
export type CouchBackupEventReason = (typeof CouchBackupEventReason)[keyof typeof CouchBackupEventReason];

/** The message of a scheduled run that found its instance hibernated with nothing new to save. */
export const SKIPPED_UNCHANGED_MESSAGE = 'skipped: unchanged since the last backup';

/**
 * Keys of the per-instance storage Secret (`spec.addons.backups.storageSecret`), which replaces the
 * cluster's object storage for that instance. bucket, accessKeyId and secretAccessKey are required.
 */
export const STORAGE_SECRET_KEYS = {
  endpoint: 'endpoint',
  bucket: 'bucket',
  region: 'region',
  prefix: 'prefix',
  forcePathStyle: 'forcePathStyle',
  accessKeyId: 'accessKeyId',
  secretAccessKey: 'secretAccessKey',
} as const;
