import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { PassThrough, Readable, Transform } from 'node:stream';
import { ArchiveCompressor, type CompressionOptions } from './archive-compressor.js';
import { ARCHIVE_FILE, MANIFEST_FILE } from './archive-format.js';
import { CouchReader, type CouchConnection } from './couch-reader.js';
import { dumpInstance } from './dump-instance.js';
import {
  buildManifest,
  computeDataFingerprint,
  type BackupManifest,
  type DatabaseManifest,
} from './manifest.js';
import type { ObjectStorage } from './object-storage.js';

export interface BackupRequest {
  couch: CouchConnection;
  storage: ObjectStorage;
  instance: { namespace: string; name: string; uid: string };
  /** The CouchBackup's name: the backup's folder in the bucket. */
  backup: string;
  now?: () => Date;
  /** How the archive is compressed; the defaults suit every backup (the bench compares others). */
  compression?: Partial<CompressionOptions>;
}

export interface BackupResult {
  manifest: BackupManifest;
  location: string;
  manifestLocation: string;
  /** Keys of the earlier backups' multipart uploads left behind (by a crash) and aborted now. */
  staleUploadsAborted: string[];
  /** Why looking for those failed, when it did: the backup itself does not depend on it. */
  staleUploadsError?: string;
}

/** The folder of an instance's backups in the bucket, under the storage prefix. */
export function instanceFolder(instance: { namespace: string; name: string }): string {
  return `${instance.namespace}/${instance.name}`;
}

/** The folder of one backup in the bucket, under the storage prefix. */
export function backupFolder(instance: { namespace: string; name: string }, backup: string): string {
  return `${instanceFolder(instance)}/${backup}`;
}

/** What identifies the instance's data now, read without reading any document. */
export async function readDataFingerprint(reader: CouchReader): Promise<string> {
  const names = await reader.allDatabases();
  const infos = await Promise.all(names.map((name) => reader.databaseInfo(name)));
  return computeDataFingerprint(
    infos.map((info, i) => ({ name: names[i] ?? info.db_name, updateSeq: String(info.update_seq) })),
  );
}

/**
 * One backup: every database of the instance streamed from CouchDB through gzip (compressed on
 * libuv's threads beside the reading one, archive-compressor.ts) into a multipart upload, then the
 * manifest beside it. The manifest is written last, so an archive without one (a crash, an abort)
 * is never taken for a backup. Memory stays at one document batch, one attachment chunk, the
 * compressor's segments and the upload's parts in flight, whatever the instance holds.
 */
export async function runBackup(request: BackupRequest): Promise<BackupResult> {
  const now = request.now ?? (() => new Date());
  const { storage, instance } = request;
  const reader = new CouchReader(request.couch);
  const startedAt = now().toISOString();
  const couchdbVersion = await reader.version();
  const names = await reader.allDatabases();
  const databases = [];
  for (const name of names) {
    const info = await reader.databaseInfo(name);
    databases.push({
      name,
      updateSeq: String(info.update_seq),
      reportedDocCount: info.doc_count,
      fileSize: info.sizes?.file ?? info.disk_size ?? 0,
    });
  }
  const folder = backupFolder(instance, request.backup);
  // One backup runs at a time per instance, so an upload under the instance's folder begun before
  // this one is an earlier backup's that a crash left unfinished.
  let staleUploadsAborted: string[] = [];
  let staleUploadsError: string | undefined;
  try {
    staleUploadsAborted = await storage.abortUploadsStartedBefore(
      instanceFolder(instance),
      new Date(startedAt),
    );
  } catch (err) {
    staleUploadsError = (err as Error).message;
  }
  const manifests: DatabaseManifest[] = [];
  const archive = new ArchiveDigest();
  const body = new PassThrough();
  const produced = pipeline(
    Readable.from(dumpInstance({ reader, instance, startedAt, databases }, manifests)),
    new ArchiveCompressor(request.compression),
    archive,
    body,
  );
  // The upload consumes `body`; a failure on either side ends the other.
  const uploaded = storage.upload(`${folder}/${ARCHIVE_FILE}`, body, {
    contentType: 'application/gzip',
    ...(request.couch.signal ? { signal: request.couch.signal } : {}),
  });
  produced.catch((err: unknown) => body.destroy(err as Error));
  await Promise.all([produced, uploaded]);

  const manifest = buildManifest({
    instance,
    backup: request.backup,
    couchdbVersion,
    startedAt,
    completedAt: now().toISOString(),
    archive: { key: storage.key(`${folder}/${ARCHIVE_FILE}`), size: archive.size, sha256: archive.sha256() },
    databases: manifests,
  });
  await storage.putJson(`${folder}/${MANIFEST_FILE}`, manifest);
  return {
    manifest,
    location: storage.location(`${folder}/${ARCHIVE_FILE}`),
    manifestLocation: storage.location(`${folder}/${MANIFEST_FILE}`),
    staleUploadsAborted,
    ...(staleUploadsError === undefined ? {} : { staleUploadsError }),
  };
}

/** Counts and hashes the compressed bytes on their way to the bucket. */
class ArchiveDigest extends Transform {
  size = 0;
  private readonly hash = crypto.createHash('sha256');
  private digest: string | undefined;

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (err?: Error | null, data?: Buffer) => void,
  ): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    done(null, chunk);
  }

  sha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }
}
