import crypto from 'node:crypto';
import type { S3Server } from '../../../../local/s3-server.js';
import type { ObjectStorage } from '../../../../operator/backup/object-storage.js';
import type {
  AttachmentRecord,
  ChunkRecord,
  DatabaseRecord,
  DocsRecord,
} from '../../../../operator/backup/archive-format.js';
import { createCouchInstance } from '../../../helpers/gateway/gateway-harness.js';
import {
  readAdminCredentials,
  startTestPlatform,
  type TestPlatform,
} from '../../../helpers/gateway/platform-harness.js';
import {
  backupOperatorEnv,
  backups,
  bucketOf,
  hasBackupPhase,
  instanceCouch,
  keyOf,
  listBackups,
  readArchive,
  readManifest,
  scheduleNotDueDuringTests,
  startBackupStorage,
  waitForEventReasons,
} from '../../../helpers/backups/backup-harness.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  hasPhase,
  patchInstance,
  testClients,
  waitForInstance,
} from '../../../helpers/operator/couch-instance-harness.js';
import { waitFor } from '../../../../local/wait.js';

/**
 * Backups against the real parts: the operator (with the backup controllers) and the kubelet
 * stand-in running pouchdb-server engines, the test control plane, and versitygw as the bucket.
 */
describe('CouchBackup', () => {
  const ns = useTestNamespace('backups');
  const other = useTestNamespace('backups-other');
  let storage: S3Server;
  let platform: TestPlatform;
  let bucket: ObjectStorage;
  const attachment = crypto.randomBytes(300 * 1024);

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    storage = await startBackupStorage();
    bucket = bucketOf(storage);
    platform = await startTestPlatform({
      kubeConfig,
      namespace: ns.name,
      operatorEnv: backupOperatorEnv(storage, {
        SETTEE_BACKUP_ATTEMPTS: '2',
        SETTEE_BACKUP_RETRY_DELAY: '200ms',
      }),
    });
    await Promise.all(
      ['shop', 'kept'].map((name) =>
        createCouchInstance(kubeConfig, { namespace: ns.name, name }, { plan: 'paid' }),
      ),
    );
    await Promise.all(
      ['shop', 'kept'].map((name) =>
        waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'), 60_000),
      ),
    );
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    bucket?.destroy();
    await storage?.stop();
  });

  it('when a schedule comes due, then a Scheduled CouchBackup completes with every database, document, attachment and _security in its archive, and a manifest beside it', async () => {
    const couch = await instanceCouch(testControlPlane().kubeConfig, { namespace: ns.name, name: 'shop' });
    expect((await couch('PUT', '/orders')).status).toBe(201);
    const docs = Array.from({ length: 1_200 }, (_, i) => ({ _id: `order-${i}`, total: i }));
    expect((await couch('POST', '/orders/_bulk_docs', { docs })).status).toBe(201);
    expect(
      (
        await couch('PUT', '/orders/_design/reports', {
          views: { byTotal: { map: 'function (doc) { emit(doc.total); }' } },
        })
      ).status,
    ).toBe(201);
    expect(
      (await couch('POST', '/orders/_index', { index: { fields: ['total'] }, name: 'by-total' })).status,
    ).toBe(200);
    const security = {
      admins: { names: ['shopkeeper'], roles: [] },
      members: { names: [], roles: ['staff'] },
    };
    expect((await couch('PUT', '/orders/_security', security)).status).toBe(200);
    const withFile = {
      _attachments: {
        'invoice.bin': { content_type: 'application/octet-stream', data: attachment.toString('base64') },
      },
    };
    expect((await couch('PUT', '/orders/invoice-1', withFile)).status).toBe(201);

    await patchInstance(ns.name, 'shop', {
      spec: { addons: { backups: { schedule: '* * * * *', retain: 3 } } },
    });
    const scheduled = await waitFor(
      'a completed scheduled backup of shop',
      async () =>
        (await listBackups(ns.name, 'shop')).find(
          (b) => b.spec.trigger === 'Scheduled' && b.status?.phase === 'Completed',
        ),
      { timeoutMs: 90_000, intervalMs: 250 },
    );
    expect(scheduled.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CouchInstance', name: 'shop' });
    expect(new Date(scheduled.metadata.annotations?.['settee.dev/scheduled-for'] ?? '').getUTCSeconds()).toBe(
      0,
    );
    // The orders, their two design documents and the invoice, and _users' _design/_auth (CouchDB
    // 3.5 makes no design document in _replicator).
    expect(scheduled.status).toMatchObject({ databases: 3, documents: 1_200 + 3 + 1, attempts: 1 });
    expect(scheduled.status?.size).toBeGreaterThan(attachment.length);

    const manifest = await readManifest(bucket, scheduled);
    expect(manifest.instance).toMatchObject({ namespace: ns.name, name: 'shop' });
    expect(manifest.archive).toMatchObject({
      size: scheduled.status?.size,
      sha256: scheduled.status?.sha256,
    });
    expect(manifest.databases.map((db) => db.name).sort()).toEqual(['_replicator', '_users', 'orders']);
    const orders = manifest.databases.find((db) => db.name === 'orders');
    expect(orders).toMatchObject({
      docCount: 1_203,
      reportedDocCount: 1_203,
      attachments: 1,
      attachmentBytes: attachment.length,
    });
    const archiveBytes = await bucket.read(keyOf(scheduled.status?.location));
    const hash = crypto.createHash('sha256');
    for await (const chunk of archiveBytes) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(manifest.archive.sha256);

    const records = await readArchive(bucket, scheduled);
    const database = records.find((r): r is DatabaseRecord => r.type === 'database' && r.name === 'orders');
    expect(database?.security).toEqual(security);
    const saved = records
      .filter((r): r is DocsRecord => r.type === 'docs' && r.db === 'orders')
      .flatMap((r) => r.docs);
    expect(saved.map((d) => d._id)).toEqual(
      expect.arrayContaining(['order-0', 'order-1199', '_design/reports', 'invoice-1']),
    );
    expect(
      saved.some(
        (d) =>
          d._id.startsWith('_design/') &&
          JSON.stringify(d).includes('"total"') &&
          d._id !== '_design/reports',
      ),
    ).toBe(true);
    const start = records.findIndex(
      (r) => r.type === 'attachment' && (r as AttachmentRecord).name === 'invoice.bin',
    );
    const chunks: Buffer[] = [];
    for (const record of records.slice(start + 1)) {
      if (record.type !== 'chunk') break;
      chunks.push(Buffer.from((record as ChunkRecord).data, 'base64'));
    }
    expect(Buffer.concat(chunks).equals(attachment)).toBe(true);
    const backedUp = await waitForInstance(
      ns.name,
      'shop',
      'BackedUp True',
      (i) => conditionOf(i, 'BackedUp')?.status === 'True',
    );
    expect(conditionOf(backedUp, 'BackedUp')?.message).toContain(scheduled.metadata.name);
    await waitForEventReasons(ns.name, 'shop', ['BackupStarted', 'BackupCompleted']);
  }, 150_000);

  it('when more backups complete than retain allows, then the oldest is deleted from the bucket and the API, and a failed backup deletes none', async () => {
    await patchInstance(ns.name, 'kept', {
      spec: { addons: { backups: { schedule: scheduleNotDueDuringTests(), retain: 2 } } },
    });
    const made = [];
    for (const name of ['kept-a', 'kept-b', 'kept-c']) {
      await backups.create(ns.name, name, { instance: 'kept' });
      made.push(await backups.waitFor(ns.name, name, 'Completed', hasBackupPhase('Completed')));
    }
    await waitFor(
      'kept-a to be deleted',
      async () =>
        (await listBackups(ns.name, 'kept')).some((b) => b.metadata.name === 'kept-a') ? undefined : true,
      // Its archive deleted from the S3-compatible server, then the object from the API.
      { timeoutMs: 60_000 },
    );
    await expect(bucket.read(keyOf(made[0]?.status?.location))).rejects.toThrow(/NoSuchKey|not found|404/i);
    expect((await listBackups(ns.name, 'kept')).map((b) => b.metadata.name).sort()).toEqual([
      'kept-b',
      'kept-c',
    ]);

    // Credentials the bucket refuses: every attempt fails, and nothing older is touched.
    await testClients().core.createNamespacedSecret({
      namespace: ns.name,
      body: {
        metadata: { name: 'wrong-keys' },
        stringData: {
          endpoint: storage.endpoint,
          bucket: 'settee-backups',
          forcePathStyle: 'true',
          accessKeyId: 'nobody',
          secretAccessKey: 'wrong',
        },
      },
    });
    await patchInstance(ns.name, 'kept', { spec: { addons: { backups: { storageSecret: 'wrong-keys' } } } });
    await backups.create(ns.name, 'kept-d', { instance: 'kept' });
    const failed = await backups.waitFor(ns.name, 'kept-d', 'Failed', hasBackupPhase('Failed'));
    expect(failed.status).toMatchObject({ attempts: 2 });
    expect(failed.status?.message).toMatch(/after 2 attempts/);
    await waitForEventReasons(ns.name, 'kept', ['BackupFailed']);
    const degraded = await waitForInstance(
      ns.name,
      'kept',
      'BackedUp False',
      (i) => conditionOf(i, 'BackedUp')?.status === 'False',
    );
    expect(conditionOf(degraded, 'BackedUp')).toMatchObject({ reason: 'BackupFailed' });
    expect(
      (await listBackups(ns.name, 'kept'))
        .filter((b) => b.status?.phase === 'Completed')
        .map((b) => b.metadata.name)
        .sort(),
    ).toEqual(['kept-b', 'kept-c']);
    for (const kept of made.slice(1))
      expect((await readManifest(bucket, kept)).backup).toBe(kept.metadata.name);
  }, 120_000);

  it("when an instance names another tenant's Secret or instance, then the API server or the operator refuses it and nothing is read", async () => {
    await expect(
      patchInstance(ns.name, 'kept', {
        spec: { addons: { backups: { storageSecret: `${other.name}/their-keys` } } },
      }),
    ).rejects.toThrow(/storageSecret/);
    await testClients().core.createNamespacedSecret({
      namespace: other.name,
      body: {
        metadata: { name: 'their-keys' },
        stringData: {
          bucket: 'settee-backups',
          accessKeyId: storage.accessKeyId,
          secretAccessKey: storage.secretAccessKey,
        },
      },
    });
    await patchInstance(ns.name, 'kept', { spec: { addons: { backups: { storageSecret: 'their-keys' } } } });
    await backups.create(ns.name, 'kept-theirs', { instance: 'kept' });
    const refused = await backups.waitFor(ns.name, 'kept-theirs', 'Failed', hasBackupPhase('Failed'));
    expect(refused.status?.message).toBe(`Secret their-keys not found in namespace ${ns.name}`);
    expect(refused.status?.attempts).toBe(1);

    await backups.create(ns.name, 'not-mine', { instance: 'someone-elses' });
    const missing = await backups.waitFor(ns.name, 'not-mine', 'Failed', hasBackupPhase('Failed'));
    expect(missing.status?.message).toBe(`CouchInstance someone-elses not found in namespace ${ns.name}`);
  });

  it('when a new instance names a backup in spec.restore, then it reports Running only once restored, with the same data and its own credentials', async () => {
    const { kubeConfig } = testControlPlane();
    const source = await instanceCouch(kubeConfig, { namespace: ns.name, name: 'shop' });
    const completed = (await listBackups(ns.name, 'shop')).find((b) => b.status?.phase === 'Completed');
    expect(completed).toBeDefined();
    const name = completed?.metadata.name ?? '';
    await createCouchInstance(
      kubeConfig,
      { namespace: ns.name, name: 'shop-copy' },
      { plan: 'paid', restore: { backup: name } },
    );
    const restored = await waitForInstance(
      ns.name,
      'shop-copy',
      'phase Running',
      hasPhase('Running'),
      90_000,
    );
    expect(restored.status?.restore).toMatchObject({ backup: name, phase: 'Completed', databases: 3 });
    expect(conditionOf(restored, 'Ready')).toMatchObject({ status: 'True' });
    const copy = await instanceCouch(kubeConfig, { namespace: ns.name, name: 'shop-copy' });
    const body = async (response: Promise<Response>) => Buffer.from(await (await response).arrayBuffer());
    expect(
      (await body(copy('GET', '/orders/_all_docs'))).equals(await body(source('GET', '/orders/_all_docs'))),
    ).toBe(true);
    expect((await body(copy('GET', '/orders/invoice-1/invoice.bin'))).equals(attachment)).toBe(true);
    expect(await (await copy('GET', '/orders/_security')).json()).toEqual(
      await (await source('GET', '/orders/_security')).json(),
    );
    const credentials = await Promise.all(
      ['shop', 'shop-copy'].map((n) => readAdminCredentials(kubeConfig, { namespace: ns.name, name: n })),
    );
    expect(credentials[0]?.password).not.toBe(credentials[1]?.password);
    await waitForEventReasons(ns.name, 'shop-copy', ['RestoreCompleted']);
  }, 150_000);

  it('when a restore names a missing backup, or is added to an existing instance, then it is refused', async () => {
    await expect(patchInstance(ns.name, 'kept', { spec: { restore: { backup: 'kept-b' } } })).rejects.toThrow(
      /restore can only be set when the instance is created/,
    );
    await createCouchInstance(
      testControlPlane().kubeConfig,
      { namespace: ns.name, name: 'from-nothing' },
      { plan: 'paid', restore: { backup: 'no-such-backup' } },
    );
    const failed = await waitForInstance(ns.name, 'from-nothing', 'phase Failed', hasPhase('Failed'), 90_000);
    expect(failed.status?.restore).toMatchObject({
      phase: 'Failed',
      message: `CouchBackup no-such-backup not found in namespace ${ns.name}`,
    });
    expect(conditionOf(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'RestoreFailed' });
    expect(conditionOf(failed, 'Degraded')).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
  }, 120_000);
});
