import crypto from 'node:crypto';
import type { S3Server } from '../../../../local/s3-server.js';
import { ARCHIVE_FILE, MANIFEST_FILE } from '../../../../operator/backup/archive-format.js';
import type { ObjectStorage } from '../../../../operator/backup/object-storage.js';
import { createCouchInstance } from '../../../helpers/gateway/gateway-harness.js';
import { startTestPlatform, type TestPlatform } from '../../../helpers/gateway/platform-harness.js';
import {
  BACKUP_PREFIX,
  backupOperatorEnv,
  backups,
  bucketOf,
  hasBackupPhase,
  instanceCouch,
  listBackups,
  readManifest,
  scheduleNotDueDuringTests,
  startBackupStorage,
  waitForEventReasons,
} from '../../../helpers/backups/backup-harness.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  eventsFor,
  hasPhase,
  waitForInstance,
} from '../../../helpers/operator/couch-instance-harness.js';

/**
 * The operator stopped in the middle of a backup (as a rollout or a lost leadership stops it) and
 * a new one started: the real operator, kubelet stand-in (pouchdb-server), control plane and
 * versitygw. The backup that was cut off must end Failed, counted as no backup, with nothing in
 * the bucket passing for one, and the older good backup and the next backup unharmed.
 */
describe('a backup across an operator restart', () => {
  const ns = useTestNamespace('backup-restart');
  let storage: S3Server;
  let platform: TestPlatform;
  let bucket: ObjectStorage;
  const { kubeConfig } = testControlPlane();

  beforeAll(async () => {
    storage = await startBackupStorage();
    bucket = bucketOf(storage);
    platform = await startTestPlatform({
      kubeConfig,
      namespace: ns.name,
      operatorEnv: backupOperatorEnv(storage, { SETTEE_BACKUP_ATTEMPTS: '1' }),
    });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
    bucket?.destroy();
    await storage?.stop();
  });

  it('when the operator stops while a backup runs, then the next operator marks it Failed "interrupted", no manifest is left for it, and the next backup completes beside the older good one', async () => {
    const ref = { namespace: ns.name, name: 'archive' };
    await createCouchInstance(kubeConfig, ref, {
      plan: 'paid',
      addons: { backups: { schedule: scheduleNotDueDuringTests(), retain: 2 } },
    });
    await waitForInstance(ns.name, ref.name, 'phase Running', hasPhase('Running'), 90_000);
    const couch = await instanceCouch(kubeConfig, ref);
    expect((await couch('PUT', '/files')).status).toBe(201);
    expect((await couch('PUT', '/files/readme', { text: 'kept' })).status).toBe(201);
    const good = await backups
      .create(ns.name, 'archive-1', { instance: ref.name })
      .then(() => backups.waitFor(ns.name, 'archive-1', 'Completed', hasBackupPhase('Completed'), 60_000));

    // Random bytes gzip cannot shrink: the next backup streams for seconds, long enough to stop in.
    const big = crypto.randomBytes(16 * 1024 * 1024);
    expect((await couch('PUT', '/files/big/blob.bin', big, 'application/octet-stream')).status).toBe(201);
    await backups.create(ns.name, 'archive-2', { instance: ref.name });
    await backups.waitFor(ns.name, 'archive-2', 'Running', hasBackupPhase('Running'), 60_000);
    await platform.restartOperator();

    const cut = await backups.waitFor(ns.name, 'archive-2', 'Failed', hasBackupPhase('Failed'), 60_000);
    expect(cut.status?.message).toMatch(/^interrupted: the operator stopped during the backup/);
    expect(cut.status?.manifest).toBeUndefined();
    const folder = `${BACKUP_PREFIX}/${ns.name}/${ref.name}/archive-2`;
    await expect(bucket.read(`${folder}/${MANIFEST_FILE}`)).rejects.toThrow(/NoSuchKey|not found|404/i);
    await expect(bucket.read(`${folder}/${ARCHIVE_FILE}`)).rejects.toThrow(/NoSuchKey|not found|404/i);
    await waitForEventReasons(ns.name, ref.name, ['BackupFailed']);
    expect(
      (await eventsFor(ns.name, ref.name)).some(
        (e) => e.reason === 'BackupFailed' && e.message?.includes('archive-2 failed: interrupted'),
      ),
    ).toBe(true);

    // The new operator runs the next backup, and the older good one is still whole.
    await backups.create(ns.name, 'archive-3', { instance: ref.name });
    const next = await backups.waitFor(
      ns.name,
      'archive-3',
      'Completed',
      hasBackupPhase('Completed'),
      240_000,
    );
    expect(next.status?.attempts).toBe(1);
    expect((await readManifest(bucket, next)).totals.attachmentBytes).toBe(big.length);
    expect((await readManifest(bucket, good)).backup).toBe('archive-1');
    // retain: 2 counts completed backups only: the interrupted one pushed no good one out.
    expect(
      (await listBackups(ns.name, ref.name))
        .filter((b) => b.status?.phase === 'Completed')
        .map((b) => b.metadata.name)
        .sort(),
    ).toEqual(['archive-1', 'archive-3']);
    const backedUp = await waitForInstance(
      ns.name,
      ref.name,
      'BackedUp True',
      (i) => conditionOf(i, 'BackedUp')?.status === 'True',
    );
    expect(conditionOf(backedUp, 'BackedUp')?.message).toContain('archive-3');
  }, 480_000);
});
