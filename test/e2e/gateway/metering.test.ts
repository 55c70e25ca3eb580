import type { CouchInstance, CouchInstancePhase } from '../../../api/couch-instance.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import {
  readAdminCredentials,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { readCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

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
      gatewayEnv: { SETTEE_GATEWAY_ACTIVITY_INTERVAL: '250ms' },
      operatorEnv: { SETTEE_USAGE_METER_INTERVAL: '1s' },
    });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('when it wakes once between two hibernations, then status.usage counts one wake and the awake and hibernated time the test saw', async () => {
    await createCouchInstance(kubeConfig, ref, { plan: 'free', hibernation: { idleAfter: '2s' } });
    // The test's own record of the phases, polled every 50 ms from creation on.
    const seen: Array<{ at: number; phase: CouchInstancePhase | undefined }> = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const instance = await readCouchInstance(kubeConfig, ref);
        seen.push({ at: Date.now(), phase: instance.status?.phase });
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
    expect(Math.abs((usage.awakeSeconds ?? 0) - awakeMs / 1000)).toBeLessThan(1);
    expect(Math.abs((usage.hibernatedSeconds ?? 0) - hibernatedMs / 1000)).toBeLessThan(1);
    expect(usage.awakeSeconds).toBeGreaterThan(2);
    expect(usage.hibernatedSeconds).toBeGreaterThan(0);
  }, 120_000);
});
