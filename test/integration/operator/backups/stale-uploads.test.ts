import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { startCouchEngine, type CouchEngine } from '../../../../local/couch-engine/index.js';
import type { S3Server } from '../../../../local/s3-server.js';
import { ObjectStorage } from '../../../../operator/backup/object-storage.js';
import { runBackup } from '../../../../operator/backup/run-backup.js';
import { BACKUP_BUCKET, BACKUP_PREFIX, startBackupStorage } from '../../../helpers/backups/backup-harness.js';

const admin = { username: 'admin', password: 'stale-uploads-password' };
const instance = { namespace: 'tenant', name: 'shop', uid: 'uid-shop' };

/**
 * An operator killed mid-backup (OOM, node loss: no chance to abort) leaves its multipart upload
 * open in the bucket: invisible as an object, its parts taking space. The next backup of the same
 * instance aborts such uploads under the instance's folder, and only those begun before it.
 * Against the real versitygw and a real CouchDB-protocol engine (pouchdb-server). The leftover is
 * made as a crashed backup leaves it: CreateMultipartUpload and an uploaded part, never completed.
 */
describe('multipart uploads left by a crashed backup', () => {
  let storage: S3Server;
  let engine: CouchEngine;
  let dataDir: string;
  let client: S3Client;
  let bucket: ObjectStorage;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-stale-uploads-'));
    [storage, engine] = await Promise.all([startBackupStorage(), startCouchEngine({ dataDir, admin })]);
    client = new S3Client({
      endpoint: storage.endpoint,
      region: storage.region,
      forcePathStyle: true,
      credentials: { accessKeyId: storage.accessKeyId, secretAccessKey: storage.secretAccessKey },
    });
    bucket = new ObjectStorage(
      {
        endpoint: storage.endpoint,
        bucket: BACKUP_BUCKET,
        region: storage.region,
        prefix: BACKUP_PREFIX,
        forcePathStyle: true,
        accessKeyId: storage.accessKeyId,
        secretAccessKey: storage.secretAccessKey,
      },
      { requestTimeoutMs: 30_000, maxAttempts: 1 },
    );
    const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
    for (const [method, url, body] of [
      ['PUT', '/orders', undefined],
      ['PUT', '/orders/o-1', JSON.stringify({ total: 12 })],
    ] as const) {
      const response = await fetch(`${engine.url}${url}`, {
        method,
        headers: { authorization, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    client?.destroy();
    bucket?.destroy();
    await Promise.all([engine?.stop(), storage?.stop()]);
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** What a backup process killed after its first part leaves behind. */
  async function leaveUnfinishedUpload(key: string): Promise<string> {
    const created = await client.send(new CreateMultipartUploadCommand({ Bucket: BACKUP_BUCKET, Key: key }));
    await client.send(
      new UploadPartCommand({
        Bucket: BACKUP_BUCKET,
        Key: key,
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: Buffer.alloc(64 * 1024, 7),
      }),
    );
    return created.UploadId ?? '';
  }

  async function openUploadKeys(): Promise<string[]> {
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: BACKUP_BUCKET }));
    return (page.Uploads ?? []).map((upload) => upload.Key ?? '').sort();
  }

  const backup = (name: string, now?: () => Date) =>
    runBackup({
      couch: { origin: engine.url, credentials: admin, timeoutMs: 30_000 },
      storage: bucket,
      instance,
      backup: name,
      ...(now ? { now } : {}),
    });

  it('when a backup starts after a crashed one, then the crashed upload under the instance is aborted and other instances\u2019 uploads are kept', async () => {
    const crashed = `${BACKUP_PREFIX}/tenant/shop/shop-sched-1/backup.ndjson.gz`;
    const neighbour = `${BACKUP_PREFIX}/tenant/shop-2/shop-2-sched-1/backup.ndjson.gz`;
    const otherTenant = `${BACKUP_PREFIX}/other/shop/shop-sched-1/backup.ndjson.gz`;
    for (const key of [crashed, neighbour, otherTenant]) await leaveUnfinishedUpload(key);
    expect(await openUploadKeys()).toEqual([crashed, neighbour, otherTenant].sort());
    // Initiated times are whole seconds on some servers: the backup starts in a later second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));

    const result = await backup('shop-sched-2');

    expect(result.staleUploadsAborted).toEqual([crashed]);
    expect(result.staleUploadsError).toBeUndefined();
    expect(result.manifest.totals.documents).toBeGreaterThanOrEqual(1);
    expect(await openUploadKeys()).toEqual([neighbour, otherTenant].sort());
  }, 60_000);

  it('when an unfinished upload under the instance began after the backup started, then it is left alone', async () => {
    const later = `${BACKUP_PREFIX}/tenant/shop/shop-manual/backup.ndjson.gz`;
    await leaveUnfinishedUpload(later);
    const anHourAgo = new Date(Date.now() - 3_600_000);

    const result = await backup('shop-sched-3', () => anHourAgo);

    expect(result.staleUploadsAborted).toEqual([]);
    expect(await openUploadKeys()).toContain(later);
  }, 60_000);

  it('when the bucket cannot list uploads, then the backup fails on the bucket, not on the stale-upload sweep', async () => {
    const refused = new ObjectStorage(
      { ...bucket.target, secretAccessKey: 'wrong-secret' },
      { requestTimeoutMs: 30_000, maxAttempts: 1 },
    );
    try {
      await expect(
        runBackup({
          couch: { origin: engine.url, credentials: admin, timeoutMs: 30_000 },
          storage: refused,
          instance,
          backup: 'shop-refused',
        }),
      ).rejects.toThrow(/uploading s3:\/\/settee-backups\/tests\/tenant\/shop\/shop-refused/);
    } finally {
      refused.destroy();
    }
  }, 60_000);
});
