import crypto from 'node:crypto';
import { ARCHIVE_FORMAT, ARCHIVE_FORMAT_VERSION } from './archive-format.js';

/** What was read of one database. */
export interface DatabaseManifest {
  name: string;
  /** Documents written to the archive (design documents included, deleted ones not). */
  docCount: number;
  /** doc_count as the database reported it when its backup started. */
  reportedDocCount: number;
  /** update_seq when its backup started. */
  updateSeq: string;
  /** The database file's size as CouchDB reported it (sizes.file), in bytes. */
  fileSize: number;
  attachments: number;
  attachmentBytes: number;
  /** sha256 of this database's records in the archive, uncompressed, hex. */
  sha256: string;
}

export interface BackupManifest {
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_FORMAT_VERSION;
  instance: { namespace: string; name: string; uid: string };
  backup: string;
  couchdbVersion: string;
  startedAt: string;
  completedAt: string;
  archive: { key: string; size: number; sha256: string; compression: 'gzip' };
  dataFingerprint: string;
  totals: { databases: number; documents: number; attachments: number; attachmentBytes: number };
  databases: DatabaseManifest[];
}

/** What identifies a database's content: its name and update sequence. */
export interface DatabaseSequence {
  name: string;
  updateSeq: string;
}

/**
 * A digest of every database's name and update sequence, in name order: any write to any database
 * moves its update_seq, and a created or deleted database changes the list, so equal fingerprints
 * mean the instance has not changed.
 */
export function computeDataFingerprint(databases: readonly DatabaseSequence[]): string {
  const hash = crypto.createHash('sha256');
  for (const { name, updateSeq } of [...databases].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  ))
    hash.update(`${name}\u0000${updateSeq}\n`);
  return `sha256:${hash.digest('hex')}`;
}

export function buildManifest(options: {
  instance: BackupManifest['instance'];
  backup: string;
  couchdbVersion: string;
  startedAt: string;
  completedAt: string;
  archive: Omit<BackupManifest['archive'], 'compression'>;
  databases: readonly DatabaseManifest[];
}): BackupManifest {
  const databases = [...options.databases];
  const sum = (field: 'docCount' | 'attachments' | 'attachmentBytes'): number =>
    databases.reduce((total, db) => total + db[field], 0);
  return {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_FORMAT_VERSION,
    instance: options.instance,
    backup: options.backup,
    couchdbVersion: options.couchdbVersion,
    startedAt: options.startedAt,
    completedAt: options.completedAt,
    archive: { ...options.archive, compression: 'gzip' },
    dataFingerprint: computeDataFingerprint(databases),
    totals: {
      databases: databases.length,
      documents: sum('docCount'),
      attachments: sum('attachments'),
      attachmentBytes: sum('attachmentBytes'),
    },
    databases,
  };
}
