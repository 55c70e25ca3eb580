import { CoordinationV1Api, CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { loadOperatorConfig } from '../../../operator/config.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import type { ControllerRegistration } from '../../../operator/controllers/registration.js';
import { ownKey } from '../../../kube/controller-runtime/key-mappers.js';
import { DONE } from '../../../kube/controller-runtime/reconciler.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { handOverVersions, recordLeaseVersions } from '../../helpers/lease-versions.js';

const namespace = useTestNamespace('operator');

/** A controller over labelled ConfigMaps that records which replica reconciled which key. */
function recordingController(replica: string, log: string[]): ControllerRegistration {
  return {
    name: 'recording',
    create({ informers }) {
      const configMaps = informers.informerFor<V1ConfigMap>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        plural: 'configmaps',
        labelSelector: 'operator-test=yes',
      });
      return {
        primary: configMaps,
        watches: [{ informer: configMaps, toKeys: ownKey }],
        reconciler: {
          async reconcile(key) {
            log.push(`${replica} ${key}`);
            return DONE;
          },
        },
      };
    },
  };
}

/**
 * The replicas' Lease duration: far longer than a takeover after a release takes (about one retry
 * period), so a takeover by expiry (15 s or later) and the bound of half of it stay seconds apart.
 */
const LEASE_DURATION_MS = 15_000;

describe('startOperator', () => {
  const running: RunningOperator[] = [];
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);

  afterEach(async () => {
    await Promise.all(running.splice(0).map((operator) => operator.stop()));
  });

  async function start(replica: string, log: string[], env: Record<string, string> = {}) {
    const config = loadOperatorConfig({
      SETTEE_WATCH_NAMESPACE: namespace.name,
      SETTEE_METRICS_PORT: '0',
      SETTEE_LEADER_ELECTION_IDENTITY: replica,
      SETTEE_LEADER_ELECTION_LEASE: 'operator-test',
      SETTEE_LEASE_DURATION: `${LEASE_DURATION_MS}ms`,
      SETTEE_LEASE_RENEW_DEADLINE: '2500ms',
      SETTEE_LEASE_RETRY_PERIOD: '300ms',
      ...env,
    });
    const operator = await startOperator({
      config,
      kubeConfig: testControlPlane().kubeConfig,
      logger: createSilentLogger(),
      controllers: [recordingController(replica, log)],
    });
    running.push(operator);
    return operator;
  }

  const http = (operator: RunningOperator, path: string) =>
    fetch(`http://127.0.0.1:${operator.healthPort}${path}`);
  const put = (name: string) =>
    core().createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name, labels: { 'operator-test': 'yes' } } },
    });

  it('when two replicas run, then only the Lease holder reconciles, both are Ready, and the standby takes over when the leader stops', async () => {
    await put('first');
    const log: string[] = [];
    const a = await start('a', log);
    await waitFor('a to lead', async () => (a.isLeading() ? true : undefined), { timeoutMs: 20_000 });
    const b = await start('b', log);
    await waitFor(
      'b to be ready',
      async () => ((await http(b, '/readyz')).status === 200 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    expect((await http(a, '/readyz')).status).toBe(200);
    await put('second');
    await waitFor('a to reconcile both', async () => (log.length >= 2 ? true : undefined), {
      timeoutMs: 15_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const key = (name: string) => `${namespace.name}/${name}`;
    expect(log.sort()).toEqual([`a ${key('first')}`, `a ${key('second')}`]);
    expect(await (await http(b, '/metrics')).text()).toMatch(/^settee_leader 0$/m);
    expect(await (await http(a, '/metrics')).text()).toMatch(/^settee_leader 1$/m);

    log.length = 0;
    const recording = await recordLeaseVersions(namespace.name, 'operator-test');
    try {
      const stoppedAt = Date.now();
      await a.stop();
      running.splice(running.indexOf(a), 1);
      await waitFor(
        'b to take over and reconcile everything',
        async () => (log.length >= 2 ? true : undefined),
        // Past the 15 s lease, so that a takeover by expiry fails the bound below, not this wait.
        { timeoutMs: 20_000 },
      );
      // The stopping leader released the Lease (no holder, a 1 s duration) and b took it then,
      // not after the 15 s lease expired.
      const takeoverMs = Date.now() - stoppedAt;
      const handOver = await handOverVersions(recording, 'a', 'b');
      expect(handOver[0]?.holderIdentity).toBeUndefined();
      expect(handOver[0]?.leaseDurationSeconds).toBe(1);
      expect(takeoverMs).toBeLessThan(LEASE_DURATION_MS / 2);
    } finally {
      recording.stop();
    }
    expect(log.sort()).toEqual([`b ${key('first')}`, `b ${key('second')}`]);
    const lease = await testControlPlane()
      .kubeConfig.makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'operator-test', namespace: namespace.name });
    expect(lease.spec?.holderIdentity).toBe('b');
  }, 120_000);

  it('when leader election is off, then the controllers run once the informers have synced', async () => {
    await put('solo');
    const log: string[] = [];
    const operator = await start('solo', log, { SETTEE_LEADER_ELECTION: 'false' });
    await waitFor('a reconcile', async () => (log.some((l) => l.endsWith('/solo')) ? true : undefined), {
      timeoutMs: 15_000,
    });
    expect(operator.isLeading()).toBe(true);
    expect((await http(operator, '/readyz')).status).toBe(200);
  });
});
