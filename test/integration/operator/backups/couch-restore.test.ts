import { startS3Server, type S3Server } from '../../../../local/s3-server.js';
import type { CouchInstance } from '../../../../api/couch-instance.js';
import { createCouchInstance } from '../../../helpers/gateway/gateway-harness.js';
import { startTestPlatform, type TestPlatform } from '../../../helpers/gateway/platform-harness.js';
import {
  BACKUP_BUCKET,
  BACKUP_PREFIX,
  backupOperatorEnv,
  backups,
  bucketOf,
  hasBackupPhase,
  instanceCouch,
  listBackups,
  scheduleNotDueDuringTests,
  waitForEventReasons,
} from '../../../helpers/backups/backup-harness.js';
import { waitFor } from '../../../../local/wait.js';
import { ARCHIVE_FILE, MANIFEST_FILE } from '../../../../operator/backup/archive-format.js';
import type { BackupManifest } from '../../../../operator/backup/manifest.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  eventsFor,
  hasPhase,
  instanceApi,
  testClients,
  waitForInstance,
} from '../../../helpers/operator/couch-instance-harness.js';

/** A bucket of the tenant's own, apart from the cluster's: where storageSecret points. */
const TENANT_BUCKET = 'tenant-vault';

/**
 * spec.restore beyond a backup's name, against the real parts (operator, kubelet stand-in with
 * pouchdb-server, test control plane, versitygw): an instance's newest backup before a time, a
 * backup read from the storage it was written to rather than the restoring instance's, and a
 * failed restore retried with back-off in plain view.
 */
describe('restoring from backups', () => {
  const ns = useTestNamespace('restore');
  const other = useTestNamespace('restore-other');
  let storage: S3Server;
  let platform: TestPlatform;
  const { kubeConfig } = testControlPlane();

  beforeAll(async () => {
    storage = await startS3Server({ buckets: [BACKUP_BUCKET, TENANT_BUCKET] });
    platform = await startTestPlatform({
      kubeConfig,
      namespace: ns.name,
      operatorEnv: backupOperatorEnv(storage, {
        SETTEE_BACKUP_ATTEMPTS: '6',
        SETTEE_BACKUP_RETRY_DELAY: '1s',
      }),
    });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
    await storage?.stop();
  });

  const startPaid = async (name: string, spec: Partial<CouchInstance['spec']> = {}) => {
    await createCouchInstance(kubeConfig, { namespace: ns.name, name }, { plan: 'paid', ...spec });
    await waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'), 90_000);
    return instanceCouch(kubeConfig, { namespace: ns.name, name });
  };
  const backUp = async (name: string, instance: string) => {
    await backups.create(ns.name, name, { instance });
    return backups.waitFor(ns.name, name, 'Completed', hasBackupPhase('Completed'), 60_000);
  };
  const idsIn = async (couch: Awaited<ReturnType<typeof startPaid>>, db: string) =>
    ((await (await couch('GET', `/${db}/_all_docs`)).json()) as { rows: { id: string }[] }).rows.map(
      (r) => r.id,
    );

  it('when spec.restore names an instance and a time, then the newest backup completed before it is restored; without a time, the newest', async () => {
    const ledger = await startPaid('ledger', {
      addons: { backups: { schedule: scheduleNotDueDuringTests() } },
    });
    expect((await ledger('PUT', '/entries')).status).toBe(201);
    expect((await ledger('PUT', '/entries/monday', { amount: 1 })).status).toBe(201);
    const first = await backUp('ledger-1', 'ledger');
    expect((await ledger('PUT', '/entries/tuesday', { amount: 2 })).status).toBe(201);
    const second = await backUp('ledger-2', 'ledger');
    expect(Date.parse(second.status?.completedAt ?? '')).toBeGreaterThan(
      Date.parse(first.status?.completedAt ?? ''),
    );

    await Promise.all([
      createCouchInstance(
        kubeConfig,
        { namespace: ns.name, name: 'ledger-monday' },
        { plan: 'paid', restore: { instance: 'ledger', before: first.status?.completedAt ?? '' } },
      ),
      createCouchInstance(
        kubeConfig,
        { namespace: ns.name, name: 'ledger-latest' },
        { plan: 'paid', restore: { instance: 'ledger' } },
      ),
    ]);
    const [monday, latest] = await Promise.all(
      ['ledger-monday', 'ledger-latest'].map((name) =>
        waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'), 90_000),
      ),
    );
    expect(monday?.status?.restore).toMatchObject({ backup: 'ledger-1', phase: 'Completed', attempts: 1 });
    expect(latest?.status?.restore).toMatchObject({ backup: 'ledger-2', phase: 'Completed' });
    expect(
      await idsIn(await instanceCouch(kubeConfig, { namespace: ns.name, name: 'ledger-monday' }), 'entries'),
    ).toEqual(['monday']);
    expect(
      await idsIn(await instanceCouch(kubeConfig, { namespace: ns.name, name: 'ledger-latest' }), 'entries'),
    ).toEqual(['monday', 'tuesday']);

    await createCouchInstance(
      kubeConfig,
      { namespace: ns.name, name: 'ledger-too-early' },
      { plan: 'paid', restore: { instance: 'ledger', before: '2020-01-01T00:00:00Z' } },
    );
    const early = await waitForInstance(
      ns.name,
      'ledger-too-early',
      'phase Failed',
      hasPhase('Failed'),
      90_000,
    );
    expect(early.status?.restore?.message).toBe(
      `no Completed CouchBackup of instance ledger in namespace ${ns.name} completed at or before 2020-01-01T00:00:00Z`,
    );
    expect(conditionOf(early, 'Degraded')).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
    await waitForEventReasons(ns.name, 'ledger-too-early', ['RestoreFailed']);
  }, 240_000);

  it("when the backup lives in another instance's own storage and that storage is unreachable for a while, then the restore retries with back-off in view and completes from there", async () => {
    const { core } = testClients();
    const vaultKeys = (endpoint: string) => ({
      endpoint,
      bucket: TENANT_BUCKET,
      forcePathStyle: 'true',
      accessKeyId: storage.accessKeyId,
      secretAccessKey: storage.secretAccessKey,
    });
    await core.createNamespacedSecret({
      namespace: ns.name,
      body: { metadata: { name: 'vault-keys' }, stringData: vaultKeys(storage.endpoint) },
    });
    const vault = await startPaid('vault', {
      addons: { backups: { schedule: scheduleNotDueDuringTests(), storageSecret: 'vault-keys' } },
    });
    expect((await vault('PUT', '/secrets')).status).toBe(201);
    expect((await vault('PUT', '/secrets/combination', { digits: '4-8-15' })).status).toBe(201);
    const made = await backUp('vault-1', 'vault');
    expect(made.status).toMatchObject({ storageSecret: 'vault-keys' });
    expect(made.status?.location).toMatch(new RegExp(`^s3://${TENANT_BUCKET}/`));

    // The Secret now points at a port nothing listens on: every read of the bucket fails.
    await core.replaceNamespacedSecret({
      namespace: ns.name,
      name: 'vault-keys',
      body: { metadata: { name: 'vault-keys' }, stringData: vaultKeys('http://127.0.0.1:9') },
    });
    // The copy has no storageSecret of its own: the cluster's bucket holds nothing of vault's.
    await createCouchInstance(
      kubeConfig,
      { namespace: ns.name, name: 'vault-copy' },
      { plan: 'paid', restore: { backup: 'vault-1' } },
    );
    const retrying = await waitForInstance(
      ns.name,
      'vault-copy',
      'Degraded RestoreRetrying',
      (i) => conditionOf(i, 'Degraded')?.reason === 'RestoreRetrying',
      90_000,
    );
    expect(retrying.status?.phase).toBe('Restoring');
    expect(conditionOf(retrying, 'Ready')).toMatchObject({ status: 'False', reason: 'Restoring' });
    expect(retrying.status?.restore).toMatchObject({ backup: 'vault-1', phase: 'Restoring' });
    expect(retrying.status?.restore?.message).toMatch(/^attempt \d failed: .*retrying in \d+s$/);
    expect(Date.parse(retrying.status?.restore?.nextAttemptAt ?? '')).toBeGreaterThan(0);
    await waitForEventReasons(ns.name, 'vault-copy', ['RestoreRetrying']);

    await core.replaceNamespacedSecret({
      namespace: ns.name,
      name: 'vault-keys',
      body: { metadata: { name: 'vault-keys' }, stringData: vaultKeys(storage.endpoint) },
    });
    const restored = await waitForInstance(
      ns.name,
      'vault-copy',
      'phase Running',
      hasPhase('Running'),
      90_000,
    );
    expect(restored.status?.restore).toMatchObject({ backup: 'vault-1', phase: 'Completed' });
    expect(restored.status?.restore?.attempts).toBeGreaterThan(1);
    expect(restored.status?.restore?.nextAttemptAt).toBeUndefined();
    expect(conditionOf(restored, 'Degraded')).toMatchObject({ status: 'False' });
    const copy = await instanceCouch(kubeConfig, { namespace: ns.name, name: 'vault-copy' });
    expect(await (await copy('GET', '/secrets/combination')).json()).toMatchObject({ digits: '4-8-15' });
    await waitForEventReasons(ns.name, 'vault-copy', ['RestoreCompleted']);
    const retries = (await eventsFor(ns.name, 'vault-copy')).filter((e) => e.reason === 'RestoreRetrying');
    expect(retries[0]?.type).toBe('Warning');
  }, 240_000);

  it('when the instance and its CouchBackups were deleted, then spec.restore by instance and time restores from the manifests left in the bucket, in its own namespace only', async () => {
    const diary = await startPaid('diary', {
      addons: { backups: { schedule: scheduleNotDueDuringTests() } },
    });
    expect((await diary('PUT', '/pages')).status).toBe(201);
    expect((await diary('PUT', '/pages/monday', { text: 'rain' })).status).toBe(201);
    const first = await backUp('diary-1', 'diary');
    expect((await diary('PUT', '/pages/tuesday', { text: 'sun' })).status).toBe(201);
    await backUp('diary-2', 'diary');
    await testClients().custom.deleteNamespacedCustomObject({ ...instanceApi(ns.name), name: 'diary' });
    // The garbage collector removes the CouchBackups with their owner; the bucket keeps the archives.
    await waitFor(
      'the CouchBackups of diary gone',
      async () => ((await listBackups(ns.name, 'diary')).length === 0 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 250 },
    );

    const restore = (namespace: string, name: string, source: { instance: string; before?: string }) =>
      createCouchInstance(kubeConfig, { namespace, name }, { plan: 'paid', restore: source });
    await Promise.all([
      restore(ns.name, 'diary-monday', { instance: 'diary', before: first.status?.completedAt ?? '' }),
      restore(ns.name, 'diary-latest', { instance: 'diary' }),
      restore(ns.name, 'diary-too-early', { instance: 'diary', before: '2020-01-01T00:00:00Z' }),
    ]);
    const [monday, latest] = await Promise.all(
      ['diary-monday', 'diary-latest'].map((name) =>
        waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'), 90_000),
      ),
    );
    expect(monday?.status?.restore).toMatchObject({ backup: 'diary-1', phase: 'Completed', attempts: 1 });
    expect(latest?.status?.restore).toMatchObject({ backup: 'diary-2', phase: 'Completed' });
    expect(
      await idsIn(await instanceCouch(kubeConfig, { namespace: ns.name, name: 'diary-monday' }), 'pages'),
    ).toEqual(['monday']);
    expect(
      await idsIn(await instanceCouch(kubeConfig, { namespace: ns.name, name: 'diary-latest' }), 'pages'),
    ).toEqual(['monday', 'tuesday']);
    expect(
      (await waitForEventReasons(ns.name, 'diary-latest', ['RestoreCompleted'])).find(
        (e) => e.reason === 'RestoreCompleted',
      )?.message,
    ).toContain(`instance diary and its CouchBackups are gone`);

    const early = await waitForInstance(
      ns.name,
      'diary-too-early',
      'phase Failed',
      hasPhase('Failed'),
      90_000,
    );
    expect(early.status?.restore?.message).toBe(
      `no CouchBackup of instance diary in namespace ${ns.name}, and no completed backup of it in ` +
        `s3://${BACKUP_BUCKET}/${BACKUP_PREFIX}/${ns.name}/diary/ completed at or before 2020-01-01T00:00:00Z`,
    );
    // Only this namespace's folder is read: a backup of another namespace's `ghost` (a copy of
    // diary-2 there, manifest and all) is not restored by an instance here naming `ghost`.
    const bucket = bucketOf(storage);
    try {
      const from = `${BACKUP_PREFIX}/${ns.name}/diary/diary-2`;
      const to = `${BACKUP_PREFIX}/${other.name}/ghost/ghost-1`;
      const manifest = await bucket.readJson<BackupManifest>(`${from}/${MANIFEST_FILE}`);
      await bucket.upload(`${to}/${ARCHIVE_FILE}`, await bucket.read(`${from}/${ARCHIVE_FILE}`), {
        contentType: 'application/gzip',
      });
      await bucket.putJson(`${to}/${MANIFEST_FILE}`, {
        ...manifest,
        instance: { ...manifest.instance, namespace: other.name, name: 'ghost' },
        backup: 'ghost-1',
      });
    } finally {
      bucket.destroy();
    }
    await restore(ns.name, 'ghost-copy', { instance: 'ghost' });
    const ghost = await waitForInstance(ns.name, 'ghost-copy', 'phase Failed', hasPhase('Failed'), 90_000);
    expect(ghost.status?.restore?.message).toBe(
      `no CouchBackup of instance ghost in namespace ${ns.name}, and no completed backup of it in ` +
        `s3://${BACKUP_BUCKET}/${BACKUP_PREFIX}/${ns.name}/ghost/`,
    );
  }, 300_000);

  it("when spec.restore names another tenant's backup or instance, or both kinds of source, then the API server refuses it", async () => {
    const create = (name: string, restore: Record<string, string>) =>
      createCouchInstance(kubeConfig, { namespace: ns.name, name }, { plan: 'paid', restore });
    await expect(create('theirs-a', { backup: `${other.name}/vault-1` })).rejects.toThrow(/restore\.backup/);
    await expect(create('theirs-b', { instance: `${other.name}/vault` })).rejects.toThrow(
      /restore\.instance/,
    );
    await expect(create('both', { backup: 'vault-1', instance: 'vault' })).rejects.toThrow(
      /exactly one of backup .* or instance/,
    );
    await expect(create('when', { backup: 'vault-1', before: '2026-01-01T00:00:00Z' })).rejects.toThrow(
      /restore\.before picks among the backups of restore\.instance/,
    );
    await expect(create('when-bad', { instance: 'vault', before: 'yesterday' })).rejects.toThrow(
      /restore\.before/,
    );
    // Another tenant's backup by its bare name is looked for in this namespace only.
    await backups.create(other.name, 'their-backup', { instance: 'their-shop' });
    await create('theirs-c', { backup: 'their-backup' });
    const refused = await waitForInstance(ns.name, 'theirs-c', 'phase Failed', hasPhase('Failed'), 90_000);
    expect(refused.status?.restore?.message).toBe(
      `CouchBackup their-backup not found in namespace ${ns.name}`,
    );
  }, 120_000);
});
