import type { CouchDocument } from './couch-reader.js';

/**
 * The archive: gzip-compressed NDJSON (one gzip member, or many one after another as
 * archive-compressor.ts writes them; RFC 1952 reads both as one stream), one record per line, in this order for each database: its
 * `database` record (with _security), then `docs` batches, each followed by the attachments of its
 * documents, every attachment an `attachment` record and `chunk` records holding its bytes in
 * base64. A reader can restore it in one pass holding one batch and one chunk at a time.
 * (couchbackup writes one JSON array of documents per line; this keeps that shape for documents and
 * adds what couchbackup leaves out: _security, and attachments without inlining them whole.)
 */
export const ARCHIVE_FORMAT = 'settee-couch-backup';
export const ARCHIVE_FORMAT_VERSION = 1;
/** Bytes of attachment per chunk record (a multiple of 3, so chunks base64-encode without padding). */
export const ATTACHMENT_CHUNK_BYTES = 48 * 1024;
export const ARCHIVE_FILE = 'backup.ndjson.gz';
export const MANIFEST_FILE = 'manifest.json';

export interface HeaderRecord {
  type: 'header';
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_FORMAT_VERSION;
  instance: { namespace: string; name: string };
  startedAt: string;
}

export interface DatabaseRecord {
  type: 'database';
  name: string;
  security: Record<string, unknown>;
}

export interface DocsRecord {
  type: 'docs';
  db: string;
  /** Winning revisions with `_revisions` history; attachments as stubs. */
  docs: CouchDocument[];
}

export interface AttachmentRecord {
  type: 'attachment';
  db: string;
  id: string;
  rev: string;
  name: string;
  contentType: string;
  /** Bytes that follow in chunk records. */
  length: number;
}

export interface ChunkRecord {
  type: 'chunk';
  /** base64 */
  data: string;
}

export interface EndRecord {
  type: 'end';
  databases: number;
}

export type ArchiveRecord =
  HeaderRecord | DatabaseRecord | DocsRecord | AttachmentRecord | ChunkRecord | EndRecord;

export function encodeRecord(record: ArchiveRecord): string {
  return `${JSON.stringify(record)}\n`;
}
