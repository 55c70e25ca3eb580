import type { V1ObjectMeta } from '@kubernetes/client-node';
import { SETTEE_GROUP, type SETTEE_API_VERSION } from './contract.js';

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
export const COUCH_BACKUP_CRD_NAME = `${COUCH_BACKUP_PLURAL}.${SETTEE_GROUP}`;

export const COUCH_BACKUP_PHASES = ['Pending', 'Running', 'Completed', 'Failed', 'Skipped'] as const;
export type CouchBackupPhase = (typeof COUCH_BACKUP_PHASES)[number];

/** Who asked for the backup. */
export const COUCH_BACKUP_TRIGGERS = ['Manual', 'Scheduled', 'Hibernation'] as const;
export type CouchBackupTrigger = (typeof COUCH_BACKUP_TRIGGERS)[number];

export interface CouchBackupSpec {
  /** The CouchInstance to back up, in the backup's own namespace. */
  instance: string;
  /** Default Manual (defaulted by the API server). */
  trigger?: CouchBackupTrigger;
}

export interface CouchBackupStatus {
  phase?: CouchBackupPhase;
  /** RFC 3339. */
  startedAt?: string;
  completedAt?: string;
  /** Bytes of the compressed archive in the bucket. */
  size?: number;
  /** Databases in the backup (system databases included). */
  databases?: number;
  /** Documents in the backup (design documents included, deleted ones not). */
  documents?: number;
  /** The archive's address, `s3://<bucket>/<key>`. */
  location?: string;
  /** The manifest's address, `s3://<bucket>/<key>`, written last: no manifest, no backup. */
  manifest?: string;
  /**
   * The instance's storage Secret the backup was written with (absent: the cluster's object
   * storage): a restore reads the backup from there, whatever storage the restoring instance uses.
   */
  storageSecret?: string;
  /** The CouchDB version the instance reported. */
  couchdbVersion?: string;
  /** sha256 of the compressed archive, hex. */
  sha256?: string;
  /**
   * A digest of every database's name and update sequence when the backup started: equal digests
   * mean no database changed, which is how an instance is known unchanged since its last backup.
   */
  dataFingerprint?: string;
  /** Tries so far (a failed try is retried with a doubling delay, up to SETTEE_BACKUP_ATTEMPTS). */
  attempts?: number;
  /** Why it failed or was skipped, or what it waits for, for a person. */
  message?: string;
}

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
