import type { S3Server } from '../../../../local/s3-server.js';
import { SKIPPED_UNCHANGED_MESSAGE } from '../../../../api/couch-backup.js';
import { waitFor } from '../../../../local/wait.js';
import { createCouchInstance } from '../../../helpers/gateway/gateway-harness.js';
import { startTestPlatform, type TestPlatform } from '../../../helpers/gateway/platform-harness.js';
import {
  backupOperatorEnv,
  instanceCouch,
  listBackups,
  scheduleNotDueDuringTests,
  startBackupStorage,
  waitForEventReasons,
} from '../../../helpers/backups/backup-harness.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  hasPhase,
  patchInstance,
  readInstance,
  readStatefulSet,
  testClients,
  waitForInstance,
} from '../../../helpers/operator/couch-instance-harness.js';

/**
 * The final backup before hibernation, and the scheduled run that finds the instance hibernated:
 * the real operator and kubelet stand-in (pouchdb-server engines), versitygw as the bucket.
 * Writes go to the pod address, as the operator's own reads do, so no gateway activity counts.
 */
describe('backups and hibernation', () => {
  const ns = useTestNamespace('backup-hibernation');
  let storage: S3Server;
  let platform: TestPlatform;

  beforeAll(async () => {
    storage = await startBackupStorage();
    platform = await startTestPlatform({
      kubeConfig: testControlPlane().kubeConfig,
      namespace: ns.name,
      operatorEnv: backupOperatorEnv(storage, {
        SETTEE_BACKUP_ATTEMPTS: '2',
        SETTEE_BACKUP_RETRY_DELAY: '300ms',
      }),
    });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
    await storage?.stop();
  });

  it('when a changed instance goes idle, then a final backup completes before it hibernates, and a scheduled run while hibernated is skipped without waking it', async () => {
    const ref = { namespace: ns.name, name: 'diary' };
    // The schedule's first run is hours away; the final backup is what this test waits for.
    await createCouchInstance(testControlPlane().kubeConfig, ref, {
      plan: 'paid',
      hibernation: { idleAfter: '6s' },
      addons: { backups: { schedule: scheduleNotDueDuringTests(), retain: 3 } },
    });
    await waitForInstance(ns.name, ref.name, 'phase Running', hasPhase('Running'), 120_000);
    const couch = await instanceCouch(testControlPlane().kubeConfig, ref);
    expect((await couch('PUT', '/entries')).status).toBe(201);
    expect(
      (await couch('POST', '/entries/_bulk_docs', { docs: [{ _id: 'monday' }, { _id: 'tuesday' }] })).status,
    ).toBe(201);

    const final = await waitFor(
      'a final backup of diary',
      async () => (await listBackups(ns.name, ref.name)).find((b) => b.spec.trigger === 'Hibernation'),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const hibernated = await waitForInstance(
      ns.name,
      ref.name,
      'phase Hibernating or Hibernated',
      (i) => i.status?.hibernatedAt !== undefined,
      120_000,
    );
    const [done] = (await listBackups(ns.name, ref.name)).filter(
      (b) => b.metadata.name === final.metadata.name,
    );
    expect(done?.status).toMatchObject({ phase: 'Completed', databases: 3 });
    expect(Date.parse(done?.status?.completedAt ?? '')).toBeLessThanOrEqual(
      Date.parse(hibernated.status?.hibernatedAt ?? ''),
    );
    expect((await readStatefulSet(ns.name, ref.name)).spec?.replicas).toBe(0);

    // A run is owed at the next minute boundary: the schedule takes effect when it is set.
    await patchInstance(ns.name, ref.name, { spec: { addons: { backups: { schedule: '* * * * *' } } } });
    const skipped = await waitFor(
      'a skipped scheduled backup of diary',
      async () =>
        (await listBackups(ns.name, ref.name)).find((b) => b.spec.trigger === 'Scheduled' && b.status?.phase),
      { timeoutMs: 75_000, intervalMs: 100 },
    );
    expect(skipped.status).toMatchObject({ phase: 'Skipped', message: SKIPPED_UNCHANGED_MESSAGE });
    const after = await readInstance(ns.name, ref.name);
    expect(after.status?.hibernatedAt).toBe(hibernated.status?.hibernatedAt);
    expect(conditionOf(after, 'Active')).toMatchObject({ status: 'False' });
    expect((await readStatefulSet(ns.name, ref.name)).spec?.replicas).toBe(0);
    await waitForEventReasons(ns.name, ref.name, [
      'BackupStarted',
      'BackupCompleted',
      'Hibernated',
      'BackupSkipped',
    ]);
  }, 300_000);

  it('when an instance goes idle with nothing changed since its last backup, then it hibernates without another backup', async () => {
    const ref = { namespace: ns.name, name: 'ledger' };
    await createCouchInstance(testControlPlane().kubeConfig, ref, {
      plan: 'paid',
      hibernation: { idleAfter: '6s' },
      addons: { backups: { schedule: scheduleNotDueDuringTests() } },
    });
    await waitForInstance(ns.name, ref.name, 'phase Running', hasPhase('Running'), 120_000);
    await waitForInstance(
      ns.name,
      ref.name,
      'hibernated',
      (i) => i.status?.hibernatedAt !== undefined,
      120_000,
    );
    const first = (await listBackups(ns.name, ref.name)).filter((b) => b.spec.trigger === 'Hibernation');
    expect(first.map((b) => b.status?.phase)).toEqual(['Completed']);

    // Woken by a request, then idle again with the same data: no second final backup.
    await patchInstance(ns.name, ref.name, {
      metadata: { annotations: { 'settee.dev/wake-requested': new Date().toISOString() } },
    });
    await waitForInstance(ns.name, ref.name, 'phase Running', hasPhase('Running'), 120_000);
    await waitForInstance(
      ns.name,
      ref.name,
      'hibernated again',
      (i) => i.status?.hibernatedAt !== undefined,
      120_000,
    );
    expect(
      (await listBackups(ns.name, ref.name)).filter((b) => b.spec.trigger === 'Hibernation'),
    ).toHaveLength(1);
  }, 300_000);

  it('when object storage is unreachable, then the final backup fails visibly after its retries, and the instance still hibernates', async () => {
    const ref = { namespace: ns.name, name: 'offline' };
    // A loopback port nothing listens on: every upload is refused at once.
    await testClients().core.createNamespacedSecret({
      namespace: ns.name,
      body: {
        metadata: { name: 'unreachable-bucket' },
        stringData: {
          endpoint: 'http://127.0.0.1:9',
          bucket: 'nowhere',
          forcePathStyle: 'true',
          accessKeyId: 'a',
          secretAccessKey: 's',
        },
      },
    });
    await createCouchInstance(testControlPlane().kubeConfig, ref, {
      plan: 'paid',
      hibernation: { idleAfter: '6s' },
      addons: { backups: { schedule: scheduleNotDueDuringTests(), storageSecret: 'unreachable-bucket' } },
    });
    await waitForInstance(ns.name, ref.name, 'phase Running', hasPhase('Running'), 120_000);
    const hibernated = await waitForInstance(
      ns.name,
      ref.name,
      'hibernated',
      (i) => i.status?.hibernatedAt !== undefined,
      90_000,
    );
    const [final] = (await listBackups(ns.name, ref.name)).filter((b) => b.spec.trigger === 'Hibernation');
    expect(final?.status).toMatchObject({ phase: 'Failed', attempts: 2 });
    expect(final?.status?.message).toMatch(/127\.0\.0\.1:9|ECONNREFUSED|connect/i);
    expect(Date.parse(final?.status?.completedAt ?? '')).toBeLessThanOrEqual(
      Date.parse(hibernated.status?.hibernatedAt ?? ''),
    );
    await waitForEventReasons(ns.name, ref.name, ['BackupFailed', 'Hibernated']);
    const backedUp = await waitForInstance(
      ns.name,
      ref.name,
      'BackedUp False',
      (i) => conditionOf(i, 'BackedUp')?.status === 'False',
    );
    expect(conditionOf(backedUp, 'BackedUp')).toMatchObject({ reason: 'BackupFailed' });
  }, 300_000);
});
