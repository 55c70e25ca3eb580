import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../../../../local/couch-engine/index.js';
import type { S3Server } from '../../../../local/s3-server.js';
import type { ObjectStorage } from '../../../../operator/backup/object-storage.js';
import { backupFolder, runBackup } from '../../../../operator/backup/run-backup.js';
import { RestoreVerificationError, runRestore } from '../../../../operator/backup/run-restore.js';
import { bucketOf, startBackupStorage } from '../../../helpers/backups/backup-harness.js';
import { basicAuth } from '../../../helpers/gateway/http-request.js';

/**
 * The backup engine's round trip, engine to bucket to a new engine: two pouchdb-server engines and
 * versitygw. (Restoring into a new CouchInstance through the API, spec.restore, is not built; this
 * is the part such a restore would run.)
 */
describe('backup and restore round trip', () => {
  const admin = { username: 'admin', password: 'round-trip-password' };
  const authorization = basicAuth(admin.username, admin.password);
  const attachment = crypto.randomBytes(20 * 1024 * 1024);
  const security = { admins: { names: ['owner'], roles: [] }, members: { names: ['reader'], roles: [] } };
  let dirs: string[] = [];
  let source: CouchEngine;
  let target: CouchEngine;
  let storage: S3Server;
  let bucket: ObjectStorage;

  const send = async (engine: CouchEngine, method: string, url: string, body?: unknown) => {
    const response = await fetch(`${engine.url}${url}`, {
      method,
      headers: { authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  };
  const json = async (engine: CouchEngine, method: string, url: string, body?: unknown) =>
    JSON.parse((await send(engine, method, url, body)).bytes.toString('utf8')) as unknown;
  const connection = (engine: CouchEngine) => ({ origin: engine.url, credentials: admin, timeoutMs: 30_000 });

  beforeAll(async () => {
    dirs = await Promise.all(
      ['source', 'target'].map((n) => fs.mkdtemp(path.join(os.tmpdir(), `settee-restore-${n}-`))),
    );
    [source, target, storage] = await Promise.all([
      startCouchEngine({ dataDir: dirs[0] ?? '', admin }),
      startCouchEngine({ dataDir: dirs[1] ?? '', admin }),
      startBackupStorage(),
    ]);
    bucket = bucketOf(storage);
    expect((await send(source, 'PUT', '/catalog')).status).toBe(201);
    for (let start = 0; start < 10_000; start += 2_000) {
      const docs = Array.from({ length: 2_000 }, (_, i) => ({
        _id: `item-${start + i}`,
        price: (start + i) % 97,
        kind: i % 2 ? 'book' : 'film',
      }));
      expect((await send(source, 'POST', '/catalog/_bulk_docs', { docs })).status).toBe(201);
    }
    // A second revision, so revision histories are restored too.
    const first = (await json(source, 'GET', '/catalog/item-0')) as { _rev: string };
    expect(
      (
        await send(source, 'PUT', '/catalog/item-0', {
          _rev: first._rev,
          price: 1,
          kind: 'film',
          edited: true,
        })
      ).status,
    ).toBe(201);
    const view = {
      views: { byPrice: { map: 'function (doc) { emit(doc.price, doc.kind); }', reduce: '_count' } },
    };
    expect((await send(source, 'PUT', '/catalog/_design/shop', view)).status).toBe(201);
    expect(
      (
        await send(source, 'POST', '/catalog/_index', {
          index: { fields: ['kind', 'price'] },
          name: 'kind-price',
        })
      ).status,
    ).toBe(200);
    expect((await send(source, 'PUT', '/catalog/_security', security)).status).toBe(200);
    const withFile = {
      kind: 'poster',
      _attachments: { 'poster.bin': { content_type: 'image/x-test', data: attachment.toString('base64') } },
    };
    expect((await send(source, 'PUT', '/catalog/poster', withFile)).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    bucket?.destroy();
    await Promise.all([source?.stop(), target?.stop(), storage?.stop()]);
    await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
  });

  it('when a backup of 10,000 documents, a 20 MB attachment, a view, a Mango index and _security is restored into a new engine, then it answers the same _all_docs, view, _find and attachment bytes', async () => {
    const instance = { namespace: 'team', name: 'catalog', uid: 'uid-1' };
    await runBackup({ couch: connection(source), storage: bucket, instance, backup: 'round-trip' });
    const restored = await runRestore({
      couch: connection(target),
      storage: bucket,
      folder: backupFolder(instance, 'round-trip'),
    });
    expect(restored).toMatchObject({ databases: 3, documents: 10_000 + 3 + 2 });

    const allDocs = (engine: CouchEngine) => json(engine, 'GET', '/catalog/_all_docs');
    expect(await allDocs(target)).toEqual(await allDocs(source));
    const viewQuery = '/catalog/_design/shop/_view/byPrice?group=true';
    expect(await json(target, 'GET', viewQuery)).toEqual(await json(source, 'GET', viewQuery));
    const find = {
      selector: { kind: 'book', price: { $gt: 90 } },
      fields: ['_id', 'price'],
      sort: [{ kind: 'asc' }, { price: 'asc' }],
      limit: 1000,
    };
    const found = (await json(target, 'POST', '/catalog/_find', find)) as { docs: unknown[] };
    expect(found.docs.length).toBeGreaterThan(0);
    expect(found).toEqual(await json(source, 'POST', '/catalog/_find', find));
    expect((await send(target, 'GET', '/catalog/poster/poster.bin')).bytes.equals(attachment)).toBe(true);
    expect(await json(target, 'GET', '/catalog/_security')).toEqual(security);
    expect(await json(target, 'GET', '/catalog/item-0?revs=true')).toEqual(
      await json(source, 'GET', '/catalog/item-0?revs=true'),
    );
  }, 180_000);

  it('when the archive does not match the checksum its manifest records, then the restore fails verification', async () => {
    const instance = { namespace: 'team', name: 'catalog', uid: 'uid-1' };
    const folder = backupFolder(instance, 'round-trip');
    const manifest = await bucket.readJson<{ archive: { sha256: string } }>(`${folder}/manifest.json`);
    await bucket.putJson(`${folder}/manifest.json`, {
      ...manifest,
      archive: { ...manifest.archive, sha256: '0'.repeat(64) },
    });
    const fresh = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-restore-fresh-'));
    dirs.push(fresh);
    const empty = await startCouchEngine({ dataDir: fresh, admin });
    try {
      await expect(runRestore({ couch: connection(empty), storage: bucket, folder })).rejects.toThrow(
        RestoreVerificationError,
      );
    } finally {
      await empty.stop();
    }
  }, 120_000);
});
