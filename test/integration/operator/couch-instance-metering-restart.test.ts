import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { activityLeaseName } from '../../../api/contract.js';
import type { CouchInstanceUsage } from '../../../api/couch-instance.js';
import { formatRequestCounts, requestUsageAnnotation, utcDay } from '../../../api/request-usage.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { useTestNamespace } from '../../helpers/kube.js';
import { clearOfUtcMidnight } from '../../helpers/clock-boundary.js';
import {
  createInstance,
  ENGINE_START_MS,
  hasPhase,
  renewActivity,
  startTestKubelet,
  startTestOperator,
  testClients,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const env = { SETTEE_USAGE_METER_INTERVAL: '1s' };

/**
 * Metering across an operator restart (the real operator, StatefulSet controller and kubelet
 * stand-in): the time the operator was away is booked when it is back, nothing twice, and the
 * gateway's request counts are summed once however many times status is rewritten.
 */
describe('metering across an operator restart', () => {
  const ns = useTestNamespace('couch-meter-restart');
  let operator: RunningOperator | undefined;
  let kubelet: { stop(): Promise<void> };

  beforeAll(async () => {
    kubelet = await startTestKubelet(ns.name);
    operator = await startTestOperator({ namespace: ns.name, env });
  });
  afterAll(async () => {
    await operator?.stop();
    await kubelet?.stop();
  });

  it('when the operator is stopped for a while and started again, then awake and add-on seconds grow by exactly the time that passed and the request counts stay what the gateway wrote', async () => {
    await createInstance(ns.name, 'metered', { plan: 'paid', keepAlive: true });
    await waitForInstance(ns.name, 'metered', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
    // The operator sums "today" by its own clock: UTC midnight passing between this write and
    // the last look (under a minute: a stop, 3 s, a start and two accruals) would rightly leave
    // the counts in yesterday.
    await clearOfUtcMidnight(60_000);
    // Plays a gateway process: its counts of today on the activity Lease (docs/metering.md).
    await renewActivity(ns.name, 'metered');
    const counts = { read: 7, write: 2, query: 1, bytesIn: 300, bytesOut: 4_000 };
    await testClients().coordination.patchNamespacedLease(
      {
        namespace: ns.name,
        name: activityLeaseName('metered'),
        body: {
          metadata: {
            annotations: {
              [requestUsageAnnotation(utcDay(Date.now()), 'gw-test.abc123')]: formatRequestCounts(counts),
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const before = (
      await waitForInstance(
        ns.name,
        'metered',
        'request counts summed',
        (i) => i.status?.usage?.requests?.read === 7 && (i.status.usage.awakeSeconds ?? 0) > 0,
      )
    ).status?.usage as CouchInstanceUsage;

    await operator?.stop();
    operator = undefined;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    operator = await startTestOperator({ namespace: ns.name, env });
    const beforeAt = Date.parse(before.meteredAt ?? '');
    const firstAfter = await waitForInstance(
      ns.name,
      'metered',
      'metered past the pause',
      (i) => Date.parse(i.status?.usage?.meteredAt ?? '') > beforeAt + 3_000,
    );
    // One more accrual after that, so the restarted operator has rewritten status at least twice
    // (waited for, not slept: a loaded machine can space accruals further apart).
    const firstAfterAt = Date.parse(firstAfter.status?.usage?.meteredAt ?? '');
    const after = (
      await waitForInstance(
        ns.name,
        'metered',
        'a second accrual after the pause',
        (i) => Date.parse(i.status?.usage?.meteredAt ?? '') > firstAfterAt,
      )
    ).status?.usage as CouchInstanceUsage;

    const elapsed = (Date.parse(after.meteredAt ?? '') - beforeAt) / 1000;
    expect(elapsed).toBeGreaterThan(3);
    expect((after.awakeSeconds ?? 0) - (before.awakeSeconds ?? 0)).toBeCloseTo(elapsed, 2);
    expect((after.addonSeconds?.keepAlive ?? 0) - (before.addonSeconds?.keepAlive ?? 0)).toBeCloseTo(
      elapsed,
      2,
    );
    expect(after.hibernatedSeconds).toBe(before.hibernatedSeconds);
    expect(after.wakes).toBe(before.wakes);
    expect(after.requests).toEqual({ read: 7, write: 2, query: 1 });
    expect([after.bytesIn, after.bytesOut]).toEqual([300, 4_000]);
    expect(after.today).toMatchObject({ date: utcDay(Date.now()), requests: 10 });
  }, 180_000);
});
