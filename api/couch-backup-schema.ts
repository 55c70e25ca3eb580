import { integer, object, OBJECT_NAME_PATTERN, string, stringEnum } from './crd-schema.js';

/**
 * The OpenAPI v3 schema of CouchBackup: the CRD's structural schema (crds/couchbackup.yaml is
 * rendered from it), the source of its TypeScript types (couch-backup.ts) and of docs/crds.md.
 */

export const COUCH_BACKUP_PHASES = ['Pending', 'Running', 'Completed', 'Failed', 'Skipped'] as const;

/** Who asked for the backup. */
export const COUCH_BACKUP_TRIGGERS = ['Manual', 'Scheduled', 'Hibernation'] as const;

export const COUCH_BACKUP_SPEC_SCHEMA = object({
  description: 'Which instance to back up. Fixed once created; create a new CouchBackup for another run.',
  required: ['instance'],
  'x-kubernetes-validations': [
    { rule: 'self == oldSelf', message: 'spec is immutable; create a new CouchBackup instead' },
  ],
  properties: {
    instance: string({
      minLength: 1,
      maxLength: 253,
      pattern: OBJECT_NAME_PATTERN,
      description:
        "Name of the CouchInstance to back up, in this CouchBackup's namespace (instances of other namespaces " +
        'cannot be named). It must be on plan paid.',
    }),
    trigger: stringEnum(COUCH_BACKUP_TRIGGERS, {
      default: 'Manual',
      description:
        "Who asked for it: Manual (a person, the default), Scheduled (the add-on's cron schedule) or " +
        'Hibernation (the final backup of a changed instance before it is scaled to zero).',
    }),
  },
});

export const COUCH_BACKUP_STATUS_SCHEMA = object({
  description: 'What the operator did. Written only by the operator.',
  properties: {
    phase: stringEnum(COUCH_BACKUP_PHASES, {
      description:
        "Pending (waiting for the instance's previous backup to end), Running, Completed (the archive and its " +
        'manifest are in the bucket), Failed (see message; older backups are kept) or Skipped (a scheduled run ' +
        'found the instance hibernated and unchanged since its last backup).',
    }),
    startedAt: string({
      format: 'date-time',
      description: 'When the operator started reading the instance.',
    }),
    completedAt: string({ format: 'date-time', description: 'When it completed, failed or was skipped.' }),
    size: integer({
      format: 'int64',
      minimum: 0,
      description: 'Bytes of the compressed archive in the bucket.',
    }),
    databases: integer({ minimum: 0, description: 'Databases in the backup, system databases included.' }),
    documents: integer({
      format: 'int64',
      minimum: 0,
      description: 'Documents in the backup, design documents included and deleted ones not.',
    }),
    location: string({
      description: 'The archive, as s3://<bucket>/<key> (gzip-compressed NDJSON, see docs/backups.md).',
    }),
    manifest: string({
      description:
        'The manifest, as s3://<bucket>/<key>: instance, CouchDB version, per-database document counts, update ' +
        'sequences, sizes and checksums, start and end times. Written last.',
    }),
    storageSecret: string({
      description:
        "The instance's addons.backups.storageSecret the backup was written with (absent: the cluster's object " +
        'storage). A restore reads the backup from there, whatever the restoring instance uses.',
    }),
    couchdbVersion: string({ description: 'The CouchDB version the instance reported.' }),
    sha256: string({ description: 'SHA-256 of the compressed archive, hex.' }),
    dataFingerprint: string({
      description:
        "A digest of every database's name and update sequence when the backup started; an instance whose " +
        'databases give the same digest has not changed since.',
    }),
    attempts: integer({
      minimum: 0,
      description:
        'Tries so far. A failed try (the instance or the bucket unreachable) is retried after a delay that ' +
        "doubles each time, up to the operator's SETTEE_BACKUP_ATTEMPTS, then the backup is Failed.",
    }),
    message: string({ description: 'Why it failed or was skipped, or what it waits for.' }),
  },
});
