import type { CouchInstance, CouchInstancePhase } from '../../../api/couch-instance.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { createCouchInstance, startTestGateway } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import {
  createServingInstance,
  readAdminCredentials,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { readCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { clearOfUtcMidnight } from '../../helpers/clock-boundary.js';

const AWAKE: ReadonlySet<CouchInstancePhase | undefined> = new Set([
  'Starting',
  'Running',
  'Waking',
  'Hibernating',
]);

/**
 * Metering end to end: the test watches the instance's phase itself while it starts, hibernates,
 * is woken by a request and hibernates again, and the operator's status.usage must agree with what
 * it saw: the wakes exactly, the awake and hibernated time within a second.
 */
describe('an instance metered through a hibernation and a wake', () => {
  const namespace = useTestNamespace('e2e-meter');
  const ref = { namespace: '', name: 'metered' };
  const { kubeConfig } = testControlPlane();
  let platform: TestPlatform;

  beforeAll(async () => {
    ref.namespace = namespace.name;
    platform = await startTestPlatform({
      kubeConfig,
      namespace: namespace.name,
      gatewayEnv: { SETTEE_GATEWAY_ACTIVITY_INTERVAL: '250ms', SETTEE_GATEWAY_USAGE_INTERVAL: '250ms' },
      operatorEnv: { SETTEE_USAGE_METER_INTERVAL: '1s' },
    });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('when it wakes once between two hibernations, then status.usage counts one wake and the awake and hibernated time the test saw', async () => {
    await createCouchInstance(kubeConfig, ref, { plan: 'free', hibernation: { idleAfter: '2s' } });
    // The test's own record of the phases, polled every 50 ms from creation on.
    const seen: Array<{ asked: number; at: number; phase: CouchInstancePhase | undefined }> = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const asked = Date.now();
        const instance = await readCouchInstance(kubeConfig, ref);
        seen.push({ asked, at: Date.now(), phase: instance.status?.phase });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const isHibernated = (instance: CouchInstance) => instance.status?.phase === 'Hibernated';
    const first = await waitForInstance(kubeConfig, ref, isHibernated, 60_000);
    const admin = await readAdminCredentials(kubeConfig, ref);
    const woken = await request(`${first.status?.endpoint}/_up`, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    expect(woken.status).toBe(200);
    await waitForInstance(kubeConfig, ref, (instance) => instance.status?.phase === 'Running');
    await waitForInstance(kubeConfig, ref, isHibernated, 60_000);
    // Let the meter book a last interval of hibernation, then stop looking.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    polling = false;
    await poller;

    const usage = (await readCouchInstance(kubeConfig, ref)).status?.usage ?? {};
    expect(usage.wakes).toBe(1);
    const meteredAt = Date.parse(usage.meteredAt ?? '');
    const metering = seen.find((s) => s.phase !== undefined && s.phase !== 'Pending')?.at ?? 0;
    let awakeMs = 0;
    let hibernatedMs = 0;
    for (let i = 0; i + 1 < seen.length; i++) {
      const from = Math.max(seen[i]!.at, metering);
      const to = Math.min(seen[i + 1]!.at, meteredAt);
      if (to <= from) continue;
      if (AWAKE.has(seen[i]!.phase)) awakeMs += to - from;
      else if (seen[i]!.phase === 'Hibernated') hibernatedMs += to - from;
    }
    // Each phase change came between the asking of the last poll that saw the old phase and the
    // answer of the first that saw the new one: the sum of those spans bounds how far this record
    // can be off, a few tenths of a second here, more when a loaded machine answers polls slowly.
    const uncertainMs = seen
      .slice(1)
      .reduce((sum, poll, i) => (poll.phase === seen[i]!.phase ? sum : sum + poll.at - seen[i]!.asked), 0);
    expect(Math.abs((usage.awakeSeconds ?? 0) - awakeMs / 1000)).toBeLessThan(1 + uncertainMs / 1000);
    expect(Math.abs((usage.hibernatedSeconds ?? 0) - hibernatedMs / 1000)).toBeLessThan(
      1 + uncertainMs / 1000,
    );
    expect(usage.awakeSeconds).toBeGreaterThan(2);
    expect(usage.hibernatedSeconds).toBeGreaterThan(0);
    // Two engine starts (the first, and the wake its request waits for) and two hibernations.
  }, 240_000);

  it('when requests go through two gateway replicas and one restarts, then status.usage counts each request once, by class and for today', async () => {
    const counted = { namespace: namespace.name, name: 'counted' };
    const { endpoint, auth } = await createServingInstance(
      kubeConfig,
      counted,
      { plan: 'free', hibernation: { idleAfter: '10m' } },
      { timeoutMs: 60_000 },
    );
    const headers = { Authorization: auth, 'Content-Type': 'application/json' };
    const env = { SETTEE_GATEWAY_USAGE_INTERVAL: '250ms' };
    const path = new URL(endpoint).pathname;
    const at = (g: Gateway, rest: string) => `${g.url}${path}${rest}`;
    const expectOk = async (answer: Promise<{ status: number }>) =>
      expect((await answer).status).toBeLessThan(300);

    // The gateways and the operator count by their own clocks' UTC day, and "today" below is all
    // seven requests: UTC midnight passing from the first request to the last look (under 45 s,
    // most of it the wait for the operator) would rightly split them between two days.
    await clearOfUtcMidnight(45_000);
    // Replica one (the platform's): 2 reads and a write; replica two: a write and a read, then it
    // restarts (a graceful stop writes its last counts) and its new process sends a query and a read.
    await expectOk(request(at(platform.gateway, '/_up'), { headers }));
    await expectOk(request(at(platform.gateway, '/_up'), { headers }));
    await expectOk(request(at(platform.gateway, '/counted-db'), { method: 'PUT', headers }));
    let replica = await startTestGateway({ kubeConfig, namespace: namespace.name, env });
    try {
      await expectOk(request(at(replica, '/counted-db/doc'), { method: 'PUT', headers, body: '{"n":1}' }));
      await expectOk(request(at(replica, '/counted-db/doc'), { headers }));
      await replica.stop();
      replica = await startTestGateway({ kubeConfig, namespace: namespace.name, env });
      await expectOk(
        request(at(replica, '/counted-db/_find'), { method: 'POST', headers, body: '{"selector":{}}' }),
      );
      await expectOk(request(at(replica, '/_up'), { headers }));
    } finally {
      await replica.stop();
    }

    const usage = await waitForInstance(
      kubeConfig,
      counted,
      (instance) => instance.status?.usage?.today?.requests === 7,
      20_000,
    ).then((instance) => instance.status?.usage ?? {});
    expect(usage.requests).toEqual({ read: 4, write: 2, query: 1 });
    expect(usage.bytesIn).toBe('{"n":1}'.length + '{"selector":{}}'.length);
    expect(usage.bytesOut).toBeGreaterThan(0);
    expect(usage.today?.date).toBe(new Date().toISOString().slice(0, 10));
    // Later accruals (every second here) add nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const later = (await readCouchInstance(kubeConfig, counted)).status?.usage;
    expect(later?.requests).toEqual({ read: 4, write: 2, query: 1 });
  }, 165_000);
});
