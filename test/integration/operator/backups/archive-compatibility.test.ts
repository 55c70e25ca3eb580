import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import zlib from 'node:zlib';
import { startCouchEngine, type CouchEngine } from '../../../../local/couch-engine/index.js';
import type { S3Server } from '../../../../local/s3-server.js';
import { ARCHIVE_FILE, MANIFEST_FILE } from '../../../../operator/backup/archive-format.js';
import type { BackupManifest } from '../../../../operator/backup/manifest.js';
import type { ObjectStorage } from '../../../../operator/backup/object-storage.js';
import { backupFolder, runBackup } from '../../../../operator/backup/run-backup.js';
import { RestoreVerificationError, runRestore } from '../../../../operator/backup/run-restore.js';
import { bucketOf, startBackupStorage } from '../../../helpers/backups/backup-harness.js';

/**
 * The archive as archive-compressor.ts writes it (gzip members compressed two at a time, packed
 * attachments Huffman-coded) restores, and so does an archive written as the operator wrote them
 * before (one gzip stream at level 6), built here from the same records; a format version newer
 * than this operator's is refused before anything is written. Real engines (local/couch-engine) and a
 * real versitygw on loopback.
 */
describe('backup archives, as written now and before', () => {
  const admin = { username: 'admin', password: 'archive' };
  const auth = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
  const instance = { namespace: 'compat', name: 'source', uid: 'uid-1' };
  const photo = crypto.randomBytes(300 * 1024);
  const notes = Buffer.from('line of notes\n'.repeat(20_000));
  const dirs: string[] = [];
  const engines: CouchEngine[] = [];
  let storage: S3Server;
  let bucket: ObjectStorage;
  let source: CouchEngine;

  async function engine(): Promise<CouchEngine> {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-archive-'));
    dirs.push(dataDir);
    const started = await startCouchEngine({ dataDir, admin });
    engines.push(started);
    return started;
  }
  const couchOf = (e: CouchEngine) => ({ origin: e.url, credentials: admin, timeoutMs: 60_000 });
  const call = async (e: CouchEngine, method: string, url: string, body?: Buffer | string, type?: string) => {
    const response = await fetch(`${e.url}${url}`, {
      method,
      headers: { authorization: auth, 'content-type': type ?? 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
    return response;
  };
  /** Writes `archive` under `name` with a manifest that matches it (the source backup's, rehashed). */
  async function storeArchive(name: string, archive: Buffer, manifest: BackupManifest, version = 1) {
    const folder = backupFolder(instance, name);
    await bucket.upload(`${folder}/${ARCHIVE_FILE}`, Readable.from([archive]), {
      contentType: 'application/gzip',
    });
    await bucket.putJson(`${folder}/${MANIFEST_FILE}`, {
      ...manifest,
      version,
      archive: {
        ...manifest.archive,
        size: archive.length,
        sha256: crypto.createHash('sha256').update(archive).digest('hex'),
      },
    });
    return folder;
  }
  async function restoredBytes(folder: string) {
    const target = await engine();
    const result = await runRestore({ couch: couchOf(target), storage: bucket, folder });
    const read = async (url: string) => Buffer.from(await (await call(target, 'GET', url)).arrayBuffer());
    return {
      documents: result.documents,
      photo: (await read('/shop/item-1/photo.jpg')).equals(photo),
      notes: (await read('/shop/item-2/notes.bin')).equals(notes),
      doc: ((await (await call(target, 'GET', '/shop/item-3')).json()) as { n: number }).n,
    };
  }

  let manifest: BackupManifest;
  let archive: Buffer;

  beforeAll(async () => {
    storage = await startBackupStorage();
    bucket = bucketOf(storage);
    source = await engine();
    await call(source, 'PUT', '/shop');
    const docs = Array.from({ length: 1_500 }, (_, i) => ({ _id: `item-${i}`, n: i }));
    await call(source, 'POST', '/shop/_bulk_docs', JSON.stringify({ docs }));
    const rev = async (id: string) =>
      ((await (await call(source, 'GET', `/shop/${id}`)).json()) as { _rev: string })._rev;
    await call(source, 'PUT', `/shop/item-1/photo.jpg?rev=${await rev('item-1')}`, photo, 'image/jpeg');
    await call(
      source,
      'PUT',
      `/shop/item-2/notes.bin?rev=${await rev('item-2')}`,
      notes,
      'application/octet-stream',
    );
    const result = await runBackup({ couch: couchOf(source), storage: bucket, instance, backup: 'now' });
    manifest = result.manifest;
    archive = await buffer(await bucket.read(`${backupFolder(instance, 'now')}/${ARCHIVE_FILE}`));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.stop()));
    await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
    bucket?.destroy();
    await storage?.stop();
  });

  it('when an archive is written now, then it is several gzip members and restores every document and attachment byte', async () => {
    // zlib starts each member with 1f 8b 08 00 and a zero time.
    const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
    let members = 0;
    for (let i = archive.indexOf(header); i !== -1; i = archive.indexOf(header, i + 1)) members++;
    expect(members).toBeGreaterThan(1);
    expect(await restoredBytes(backupFolder(instance, 'now'))).toEqual({
      documents: manifest.databases.reduce((sum, db) => sum + db.docCount, 0),
      photo: true,
      notes: true,
      doc: 3,
    });
  });

  it('when an archive was written as before (one gzip stream at level 6), then it restores the same', async () => {
    const before = zlib.gzipSync(zlib.gunzipSync(archive), { level: 6 });
    const folder = await storeArchive('before', before, manifest);
    expect(await restoredBytes(folder)).toEqual({
      documents: manifest.databases.reduce((sum, db) => sum + db.docCount, 0),
      photo: true,
      notes: true,
      doc: 3,
    });
  });

  it('when the manifest names a format version newer than this operator knows, then the restore is refused naming it', async () => {
    const folder = await storeArchive('newer', archive, manifest, 2);
    const target = await engine();
    await expect(runRestore({ couch: couchOf(target), storage: bucket, folder })).rejects.toThrow(
      new RestoreVerificationError(
        `${folder}/${MANIFEST_FILE}: format version 2, this operator restores versions 1 to 1`,
      ),
    );
    const dbs = (await (await call(target, 'GET', '/_all_dbs')).json()) as string[];
    expect(dbs).not.toContain('shop');
  });
});
