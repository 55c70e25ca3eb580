import crypto from 'node:crypto';
import { Transform } from 'node:stream';
import zlib from 'node:zlib';
import {
  ARCHIVE_FILE,
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  MANIFEST_FILE,
  type ArchiveRecord,
} from './archive-format.js';
import { ArchiveLines } from './archive-lines.js';
import { checkBulkAnswers, type BulkDocsAnswer } from './bulk-docs-answer.js';
import { CouchReader, CouchRequestError, type CouchConnection, type CouchDocument } from './couch-reader.js';
import type { BackupManifest } from './manifest.js';
import { AttachmentUpload } from './attachment-upload.js';
import type { ObjectStorage } from './object-storage.js';
import { WritesInFlight } from './writes-in-flight.js';

/** The archive is not what its manifest says, or not an archive of this format. */
export class RestoreVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreVerificationError';
  }
}

export interface RestoreRequest {
  couch: CouchConnection;
  storage: ObjectStorage;
  /** The backup's folder in the bucket (backupFolder of run-backup.ts). */
  folder: string;
  /** Writes sent before the first is answered; 1 waits for each. Default RESTORE_WRITES_IN_FLIGHT. */
  writesInFlight?: number;
}

/**
 * While CouchDB writes one batch (parses it, decodes attachments, writes and syncs them) the
 * restore reads, decompresses and sends the next. Each write in flight holds one batch of documents
 * or an attachment's last chunk, so memory stays flat in the attachments' size. A constant, not a
 * setting: the operator always restores with it; only the bench passes writesInFlight (1, to measure
 * the earlier one-at-a-time restore).
 */
const RESTORE_WRITES_IN_FLIGHT = 3;

export interface RestoreResult {
  manifest: BackupManifest;
  databases: number;
  documents: number;
}

/** A document whose attachments are still to come in the archive. */
interface PendingDocument {
  doc: CouchDocument;
  missing: number;
}

/**
 * Restores a backup into an instance, in one pass over the archive: each database is created with
 * its _security, documents are written with their revision histories (`new_edits: false`, so a
 * restored document has the revision it had), and a document with attachments is written as its
 * attachments' bytes are read: its _bulk_docs request is opened at its first attachment and the
 * attachments' base64 streams into it chunk by chunk (attachment-upload.ts). Up to
 * RESTORE_WRITES_IN_FLIGHT writes are sent before the first is answered. Memory holds that many
 * batches of documents and chunks, whatever the attachments' size. Verified against the manifest: the
 * archive's SHA-256, and each database's doc_count.
 */
export async function runRestore(request: RestoreRequest): Promise<RestoreResult> {
  const { storage, folder } = request;
  const reader = new CouchReader(request.couch);
  const manifest = await storage.readJson<BackupManifest>(`${folder}/${MANIFEST_FILE}`);
  if (manifest.format !== ARCHIVE_FORMAT)
    throw new RestoreVerificationError(`${folder}: not a ${ARCHIVE_FORMAT} manifest`);
  checkVersion(manifest.version, `${folder}/${MANIFEST_FILE}`);
  const hash = crypto.createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const lines = new ArchiveLines();
  const archive = await storage.read(`${folder}/${ARCHIVE_FILE}`);
  const gunzip = zlib.createGunzip();
  // pipe() rather than pipeline(): the loop below ends the read early on a bad record, and a
  // failure on the way reaches it through `lines`.
  for (const [from, to] of [
    [archive, hashing],
    [hashing, gunzip],
    [gunzip, lines],
  ] as const)
    from.on('error', (err) => to.destroy(err));
  archive.pipe(hashing).pipe(gunzip).pipe(lines);
  const pending = new Map<string, PendingDocument>();
  const writes = new WritesInFlight(request.writesInFlight ?? RESTORE_WRITES_IN_FLIGHT);
  const keyOf = (db: string, id: string): string => `${db}\u0000${id}`;
  let upload: AttachmentUpload | undefined;
  let inAttachment = false;
  /** The attachment whose chunks just ended: its document is written once its last one has. */
  const finishAttachment = async (): Promise<void> => {
    if (!inAttachment || !upload) return;
    inAttachment = false;
    await upload.endAttachment();
    const waiting = pending.get(upload.key);
    if (waiting && --waiting.missing === 0) {
      pending.delete(upload.key);
      const done = upload;
      upload = undefined;
      await writes.add(done.finish());
    }
  };
  try {
    for await (const line of lines as AsyncIterable<string>) {
      if (!line) continue;
      const record = JSON.parse(line) as ArchiveRecord;
      if (record.type === 'chunk') {
        if (!inAttachment || !upload)
          throw new RestoreVerificationError('attachment bytes without an attachment record');
        // An earlier write's failure ends the restore here, not after the rest of a 32 MB attachment.
        writes.throwIfFailed();
        await upload.write(record.data);
        continue;
      }
      await finishAttachment();
      if (record.type === 'header' && record.format !== ARCHIVE_FORMAT)
        throw new RestoreVerificationError(`not a ${ARCHIVE_FORMAT} archive`);
      if (record.type === 'header') checkVersion(record.version, ARCHIVE_FILE);
      if (record.type === 'database') await createDatabase(reader, record.name, record.security);
      if (record.type === 'docs') {
        const plain: CouchDocument[] = [];
        for (const doc of record.docs) {
          const stubs = Object.keys(doc._attachments ?? {}).length;
          if (stubs === 0) plain.push(doc);
          else pending.set(keyOf(record.db, doc._id), { doc, missing: stubs });
        }
        if (plain.length > 0) await writes.add(writeDocuments(reader, record.db, plain));
      }
      if (record.type === 'attachment') {
        const key = keyOf(record.db, record.id);
        const waiting = pending.get(key);
        if (!waiting)
          throw new RestoreVerificationError(
            `attachment ${record.name} of ${record.db}/${record.id} has no document`,
          );
        if (upload && upload.key !== key)
          throw new RestoreVerificationError(`${upload.key.replace('\u0000', '/')} is missing attachments`);
        upload ??= AttachmentUpload.open({ reader, db: record.db, key, doc: waiting.doc });
        await upload.startAttachment(record.name, record.contentType);
        inAttachment = true;
      }
    }
    await finishAttachment();
    await writes.drain();
  } finally {
    upload?.abandon();
    archive.destroy();
    // On a failure, the writes already sent are answered before the caller hears of it: a report
    // or a retry then sees every write that will ever land.
    await writes.settle();
  }
  if (pending.size > 0)
    throw new RestoreVerificationError(`${pending.size} documents are missing attachments`);
  if (hash.digest('hex') !== manifest.archive.sha256)
    throw new RestoreVerificationError('the archive does not match the SHA-256 in its manifest');
  let documents = 0;
  for (const db of manifest.databases) {
    const info = await reader.databaseInfo(db.name);
    // _users and _replicator may hold documents of the new instance's own besides the restored ones.
    const fits = db.name.startsWith('_') ? info.doc_count >= db.docCount : info.doc_count === db.docCount;
    if (!fits)
      throw new RestoreVerificationError(
        `${db.name}: ${info.doc_count} documents after the restore, the manifest says ${db.docCount}`,
      );
    documents += db.docCount;
  }
  return { manifest, databases: manifest.databases.length, documents };
}

/**
 * Every version up to ours restores (version 1 archives are one gzip member, as earlier operators
 * wrote them, or many, as archive-compressor.ts does; gunzip reads both); a newer one was written
 * by a newer operator, whose records this one may misread.
 */
function checkVersion(version: number, what: string): void {
  if (!Number.isInteger(version) || version < 1 || version > ARCHIVE_FORMAT_VERSION)
    throw new RestoreVerificationError(
      `${what}: format version ${version}, this operator restores versions 1 to ${ARCHIVE_FORMAT_VERSION}`,
    );
}

const USERS_DB = '_users';

async function createDatabase(
  reader: CouchReader,
  name: string,
  security: Record<string, unknown>,
): Promise<void> {
  try {
    await reader.json('PUT', `/${encodeURIComponent(name)}`);
  } catch (err) {
    // The system databases exist in every instance already (412). A real CouchDB that is creating
    // _replicator itself as the restore starts answers the second creation 500 "conflict" once the
    // first has won: what matters is that the database is there.
    if (!(err instanceof CouchRequestError && (err.status === 412 || err.status === 500))) throw err;
    if (!(await databaseExists(reader, name))) throw err;
  }
  // CouchDB 3 refuses to edit the _users database's security object (users_db_security_editable is
  // false by default): the new instance keeps its own, which is CouchDB's default like the backed-up one.
  if (Object.keys(security).length > 0 && name !== USERS_DB)
    await reader.json('PUT', `/${encodeURIComponent(name)}/_security`, security);
}

async function databaseExists(reader: CouchReader, name: string): Promise<boolean> {
  try {
    await reader.json('GET', `/${encodeURIComponent(name)}`);
    return true;
  } catch (err) {
    if (err instanceof CouchRequestError && err.status === 404) return false;
    throw err;
  }
}

async function writeDocuments(reader: CouchReader, db: string, docs: CouchDocument[]): Promise<void> {
  checkBulkAnswers(
    db,
    await reader.json<BulkDocsAnswer>('POST', `/${encodeURIComponent(db)}/_bulk_docs`, {
      new_edits: false,
      docs,
    }),
  );
}
