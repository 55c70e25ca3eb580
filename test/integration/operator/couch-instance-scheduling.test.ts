import { waitFor } from '../../../local/wait.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  eventsFor,
  hasPhase,
  readInstance,
  requestWake,
  testClients,
  useSuitePlatform,
  waitForInstance,
} from './couch-instance-harness.js';

const START_DEADLINE = '3s';

/**
 * Region pinning through the real kube-scheduler: the test control plane has two stand-in nodes,
 * one in each of two regions (TEST_NODES).
 */
describe('CouchInstance scheduling', () => {
  const ns = useTestNamespace('couch-scheduling');
  // Short, so that an instance that cannot start is scaled to zero within the test.
  useSuitePlatform(ns, { env: { SETTEE_START_DEADLINE: START_DEADLINE } });

  it('when it is pinned to a region, then its pod runs on that region node', async () => {
    const node = TEST_NODES[1]!;
    await createInstance(ns.name, 'pinned', {
      plan: 'paid',
      addons: { regionPinning: { region: node.region } },
    });
    await waitForInstance(ns.name, 'pinned', 'phase Running', hasPhase('Running'), 40_000);
    const pod = await testClients().core.readNamespacedPod({ namespace: ns.name, name: 'pinned-0' });
    expect(pod.spec?.nodeName).toBe(node.name);
  });

  it('when it is pinned to a region no node has, then Ready and Degraded say Unschedulable with the scheduler message, and a Warning Event says so once', async () => {
    await createInstance(ns.name, 'nowhere', {
      plan: 'paid',
      addons: { regionPinning: { region: 'nowhere-1' } },
    });
    const instance = await waitForInstance(
      ns.name,
      'nowhere',
      'Ready reason Unschedulable',
      (i) => conditionOf(i, 'Ready')?.reason === 'Unschedulable',
    );
    expect(instance.status?.phase).toBe('Starting');
    expect(conditionOf(instance, 'Ready')).toMatchObject({
      status: 'False',
      message: expect.stringMatching(
        /^the pod cannot be scheduled: 0\/2 nodes are available: .*node affinity/,
      ),
    });
    expect(conditionOf(instance, 'Degraded')).toMatchObject({ status: 'True', reason: 'Unschedulable' });
    const warnings = (await eventsFor(ns.name, 'nowhere')).filter((e) => e.reason === 'Unschedulable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      type: 'Warning',
      message: conditionOf(instance, 'Degraded')?.message,
    });
  });

  it('when it cannot be scheduled and nobody uses it past idleAfter and the start deadline, then it is scaled to zero, Active says StartDeadlineExceeded with the scheduler message, a Warning Event says so, and a wake tries again', async () => {
    await createInstance(ns.name, 'stuck', {
      plan: 'paid',
      hibernation: { idleAfter: '1s' },
      addons: { regionPinning: { region: 'nowhere-1' } },
    });
    const hibernated = await waitForInstance(
      ns.name,
      'stuck',
      'phase Hibernated',
      hasPhase('Hibernated'),
      30_000,
    );
    expect(conditionOf(hibernated, 'Active')).toMatchObject({
      status: 'False',
      reason: 'StartDeadlineExceeded',
      message: expect.stringMatching(
        /^CouchDB did not answer within 3s and nothing used it for 1s \(its pod cannot be scheduled: 0\/2 nodes are available: .*node affinity.*\): scaled to zero with its data kept; the next request starts it again$/,
      ),
    });
    expect(hibernated.status?.hibernatedAt).toBeDefined();
    const { core, apps } = testClients();
    expect((await apps.readNamespacedStatefulSet({ namespace: ns.name, name: 'stuck' })).spec?.replicas).toBe(
      0,
    );
    await waitFor(
      'the pod to be gone',
      async () =>
        (await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'settee.dev/instance=stuck' }))
          .items.length === 0
          ? true
          : undefined,
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    // Still hibernated on later reconciles: the reason stays although the pod and its message are gone.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const later = await readInstance(ns.name, 'stuck');
    expect(later.status?.phase).toBe('Hibernated');
    expect(conditionOf(later, 'Active')).toEqual(conditionOf(hibernated, 'Active'));
    const warnings = (await eventsFor(ns.name, 'stuck')).filter((e) => e.reason === 'StartDeadlineExceeded');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      type: 'Warning',
      message: conditionOf(hibernated, 'Active')?.message,
    });

    await requestWake(ns.name, 'stuck');
    const waking = await waitForInstance(
      ns.name,
      'stuck',
      'Waking and Unschedulable again',
      (i) => hasPhase('Waking')(i) && conditionOf(i, 'Ready')?.reason === 'Unschedulable',
      15_000,
    );
    expect(conditionOf(waking, 'Active')).toMatchObject({ status: 'True', reason: 'WakeRequested' });
  }, 60_000);
});
