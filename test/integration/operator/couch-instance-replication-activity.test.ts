import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { waitFor } from '../../../local/wait.js';
import { activityLeaseName } from '../../../api/contract.js';
import { podAddress } from '../../../api/pod-address.js';
import { isNotFound } from '../../../kube/errors.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth } from '../../helpers/gateway/http-request.js';
import {
  readAdminCredentials,
  startTestPlatform,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  hasPhase,
  metricValue,
  patchInstance,
  readInstance,
  readStatefulSet,
  testClients,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const IDLE_AFTER_MS = 2_000;
/** How long the instance must stay up on its replication alone: several idleAfter periods. */
const OBSERVED_MS = 4 * IDLE_AFTER_MS;

/**
 * A replication the instance's own replicator runs (a document in its /_replicator) never passes
 * the gateway: the real operator asks the instance for its running jobs before hibernating it. The
 * kubelet stand-in runs the instance's engine; a second engine is the replication's source. After
 * set-up nobody sends the instance a request through the gateway (its activity Lease is checked).
 * The source's password holds ':' and '@', which CouchDB 3.5's replicator cannot take from a URL's
 * userinfo (its _session login is refused), so the source names its credentials in `auth.basic`.
 */
describe('an instance whose own replicator runs a continuous replication', () => {
  const namespace = useTestNamespace('repl-activity');
  const ref = { namespace: '', name: 'puller' };
  const sourceAdmin = { username: 'source', password: 'source:secret@1' };
  const sourceAuth = basicAuth(sourceAdmin.username, sourceAdmin.password);
  let platform: TestPlatform;
  let source: CouchEngine;
  let sourceDir: string;
  /** The instance's engine, straight at its pod address: these requests never pass the gateway. */
  let instanceOrigin: string;
  let instanceAuth: string;
  let instanceUserinfo: string;
  let postedAt: number;

  const send = (url: string, authorization: string, options: { method?: string; body?: object } = {}) =>
    fetch(url, {
      method: options.method ?? 'GET',
      headers: { Authorization: authorization, 'Content-Type': 'application/json' },
      ...(options.body ? { body: JSON.stringify(options.body) } : {}),
    });

  const runningChecks = () =>
    metricValue(platform.operator, 'settee_couch_replication_checks_total{result="running"}');

  /** True when the gateway renewed the instance's activity Lease after `since`. */
  const gatewayActivitySince = async (since: number): Promise<boolean> => {
    try {
      const lease = await testClients().coordination.readNamespacedLease({
        namespace: ref.namespace,
        name: activityLeaseName(ref.name),
      });
      const renewed = lease.spec?.renewTime;
      return renewed !== undefined && new Date(renewed).getTime() >= since;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    ref.namespace = namespace.name;
    sourceDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-replication-source-'));
    [platform, source] = await Promise.all([
      startTestPlatform({ kubeConfig, namespace: namespace.name }),
      startCouchEngine({ dataDir: sourceDir, admin: sourceAdmin }),
    ]);
    // A long idleAfter while the replication is set up, shortened once it runs.
    await createCouchInstance(kubeConfig, ref, { plan: 'free', hibernation: { idleAfter: '10m' } });
    await waitForInstance(ref.namespace, ref.name, 'phase Running', hasPhase('Running'), 60_000);
    const admin = await readAdminCredentials(kubeConfig, ref);
    instanceAuth = basicAuth(admin.username, admin.password);
    instanceUserinfo = `${encodeURIComponent(admin.username)}:${encodeURIComponent(admin.password)}`;
    const pod = await testClients().core.readNamespacedPod({
      namespace: ref.namespace,
      name: `${ref.name}-0`,
    });
    instanceOrigin = podAddress(pod)?.origin ?? '';
    // The kubelet stand-in gives each pod a loopback address of its own, on the template's port.
    expect(instanceOrigin).toMatch(/^http:\/\/127\.\d+\.\d+\.\d+:5984$/);
  }, 90_000);

  afterAll(async () => {
    await platform?.stop();
    await source?.stop();
    await fs.rm(sourceDir, { recursive: true, force: true });
  });

  const docArrives = (id: string): Promise<true> =>
    waitFor(
      `${id} to be replicated into the instance`,
      async () =>
        (await send(`${instanceOrigin}/copy/${id}`, instanceAuth)).status === 200 ? true : undefined,
      { timeoutMs: 15_000 },
    );

  it('when a continuous pull runs and idleAfter is short, then it stays awake for several idleAfter periods and writes to the source keep arriving', async () => {
    expect((await send(`${source.url}/live`, sourceAuth, { method: 'PUT' })).status).toBe(201);
    const posted = await send(`${instanceOrigin}/_replicator/pull`, instanceAuth, {
      method: 'PUT',
      body: {
        source: { url: `${source.url}/live`, auth: { basic: sourceAdmin } },
        target: `http://${instanceUserinfo}@${new URL(instanceOrigin).host}/copy`,
        create_target: true,
        continuous: true,
      },
    });
    expect(posted.status).toBe(201);
    postedAt = Date.now();
    expect(
      (await send(`${source.url}/live/first`, sourceAuth, { method: 'PUT', body: { n: 0 } })).status,
    ).toBe(201);
    await docArrives('first');

    const checksBefore = await runningChecks();
    await patchInstance(ref.namespace, ref.name, {
      spec: { hibernation: { idleAfter: `${IDLE_AFTER_MS / 1000}s` } },
    });
    const until = Date.now() + OBSERVED_MS;
    for (let n = 1; Date.now() < until; n += 1) {
      const id = `doc-${n}`;
      expect(
        (await send(`${source.url}/live/${id}`, sourceAuth, { method: 'PUT', body: { n } })).status,
      ).toBe(201);
      await docArrives(id);
      const instance = await readInstance(ref.namespace, ref.name);
      expect(instance.status?.phase).toBe('Running');
      expect(instance.status?.hibernatedAt).toBeUndefined();
      expect((await readStatefulSet(ref.namespace, ref.name)).spec?.replicas).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const awake = await readInstance(ref.namespace, ref.name);
    expect(conditionOf(awake, 'Active')).toMatchObject({ status: 'True', reason: 'ReplicationRunning' });
    // Asked at each idle deadline: at least once per idleAfter period observed, but one.
    expect((await runningChecks()) - checksBefore).toBeGreaterThanOrEqual(OBSERVED_MS / IDLE_AFTER_MS - 1);
    expect(await gatewayActivitySince(postedAt)).toBe(false);
  }, 60_000);

  it('when the replication document is deleted, then it hibernates', async () => {
    const current = (await (await send(`${instanceOrigin}/_replicator/pull`, instanceAuth)).json()) as {
      _rev: string;
    };
    const deleted = await send(`${instanceOrigin}/_replicator/pull?rev=${current._rev}`, instanceAuth, {
      method: 'DELETE',
    });
    expect(deleted.status).toBe(200);

    const hibernated = await waitForInstance(
      ref.namespace,
      ref.name,
      'phase Hibernated',
      hasPhase('Hibernated'),
      // Idle checks, then the StatefulSet controller deletes the pod and the engine stops.
      3 * IDLE_AFTER_MS + 30_000,
    );
    expect(hibernated.status?.hibernatedAt).toBeDefined();
    expect((await readStatefulSet(ref.namespace, ref.name)).spec?.replicas).toBe(0);
    expect(
      await metricValue(platform.operator, 'settee_couch_replication_checks_total{result="none"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(await gatewayActivitySince(postedAt)).toBe(false);
  }, 60_000);
});
