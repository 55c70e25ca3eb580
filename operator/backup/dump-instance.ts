import crypto from 'node:crypto';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  ATTACHMENT_CHUNK_BYTES,
  encodeRecord,
  type ArchiveRecord,
} from './archive-format.js';
import type { ArchivePiece } from './archive-compressor.js';
import { isPackedAttachment } from './attachment-packing.js';
import type { CouchDocument, CouchReader } from './couch-reader.js';
import type { DatabaseManifest } from './manifest.js';

/** Documents per _changes page and _bulk_get call: one batch is what a dump holds in memory. */
export const DUMP_BATCH_SIZE = 500;

export interface DumpSource {
  reader: CouchReader;
  instance: { namespace: string; name: string };
  startedAt: string;
  /** The databases to dump, with what their info said when the backup started. */
  databases: { name: string; updateSeq: string; reportedDocCount: number; fileSize: number }[];
}

/**
 * The archive's uncompressed bytes, produced as they are read from the instance: one _changes page
 * and its _bulk_get at a time, each attachment streamed in chunks, the chunks of an attachment
 * compressed already marked `packed` (attachment-packing.ts). `manifests` is filled in as each
 * database ends, so it is complete once the generator is.
 */
export async function* dumpInstance(
  source: DumpSource,
  manifests: DatabaseManifest[],
): AsyncGenerator<ArchivePiece> {
  const { reader } = source;
  yield line({
    type: 'header',
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_FORMAT_VERSION,
    instance: source.instance,
    startedAt: source.startedAt,
  });
  for (const db of source.databases) {
    const hash = crypto.createHash('sha256');
    const manifest: DatabaseManifest = {
      name: db.name,
      docCount: 0,
      reportedDocCount: db.reportedDocCount,
      updateSeq: db.updateSeq,
      fileSize: db.fileSize,
      attachments: 0,
      attachmentBytes: 0,
      sha256: '',
    };
    const emit = (piece: ArchivePiece): ArchivePiece => {
      hash.update(piece.bytes);
      return piece;
    };
    yield emit(line({ type: 'database', name: db.name, security: await reader.security(db.name) }));
    let since: string | number = 0;
    for (;;) {
      const page = await reader.changes(db.name, since, DUMP_BATCH_SIZE);
      const live = page.results.filter((change) => !change.deleted && change.changes[0]);
      if (live.length > 0) {
        const docs = await reader.bulkGet(
          db.name,
          live.map((change) => ({ id: change.id, rev: change.changes[0]?.rev ?? '' })),
        );
        manifest.docCount += docs.length;
        yield emit(line({ type: 'docs', db: db.name, docs }));
        for (const doc of docs) {
          for await (const piece of attachmentsOf(reader, db.name, doc, manifest)) yield emit(piece);
        }
      }
      if (page.results.length < DUMP_BATCH_SIZE) break;
      since = page.last_seq;
    }
    manifest.sha256 = hash.digest('hex');
    manifests.push(manifest);
  }
  yield line({ type: 'end', databases: source.databases.length });
}

async function* attachmentsOf(
  reader: CouchReader,
  db: string,
  doc: CouchDocument,
  manifest: DatabaseManifest,
): AsyncGenerator<ArchivePiece> {
  for (const [name, stub] of Object.entries(doc._attachments ?? {})) {
    const contentType = stub.content_type ?? 'application/octet-stream';
    yield line({
      type: 'attachment',
      db,
      id: doc._id,
      rev: doc._rev,
      name,
      contentType,
      length: stub.length ?? 0,
    });
    let pending: Buffer = Buffer.alloc(0);
    let length = 0;
    let packed: boolean | undefined;
    const chunk = (bytes: Buffer): ArchivePiece => {
      packed ??= isPackedAttachment(contentType, bytes);
      length += bytes.length;
      return line({ type: 'chunk', data: bytes.toString('base64') }, packed);
    };
    for await (const piece of await reader.attachment(db, doc._id, doc._rev, name)) {
      pending = pending.length === 0 ? (piece as Buffer) : Buffer.concat([pending, piece as Buffer]);
      while (pending.length >= ATTACHMENT_CHUNK_BYTES) {
        yield chunk(pending.subarray(0, ATTACHMENT_CHUNK_BYTES));
        pending = pending.subarray(ATTACHMENT_CHUNK_BYTES);
      }
    }
    if (pending.length > 0) yield chunk(pending);
    if (stub.length !== undefined && length !== stub.length)
      throw new Error(
        `attachment ${db}/${doc._id}/${name}: read ${length} bytes, its stub says ${stub.length}`,
      );
    manifest.attachments += 1;
    manifest.attachmentBytes += length;
  }
}

function line(record: ArchiveRecord, packed = false): ArchivePiece {
  return { bytes: Buffer.from(encodeRecord(record), 'utf8'), packed };
}
