import type { CouchInstance } from '../../../api/couch-instance.js';
import { waitFor } from '../../../local/wait.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  ENGINE_START_MS,
  eventsFor,
  hasPhase,
  patchInstance,
  readInstance,
  readStatefulSet,
  testClients,
  useSuitePlatform,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const START_DEADLINE = '3s';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    await waitForInstance(ns.name, 'pinned', 'phase Running', hasPhase('Running'), ENGINE_START_MS);
    const pod = await testClients().core.readNamespacedPod({ namespace: ns.name, name: 'pinned-0' });
    expect(pod.spec?.nodeName).toBe(node.name);
  }, 90_000);

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
    // The Event is written beside the status, not before it: wait for it rather than read once.
    const warnings = await waitFor(
      'the Unschedulable Warning Event',
      async () => {
        const events = (await eventsFor(ns.name, 'nowhere')).filter((e) => e.reason === 'Unschedulable');
        return events.length > 0 ? events : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      type: 'Warning',
      message: conditionOf(instance, 'Degraded')?.message,
    });
  });

  it('when it has not answered within the start deadline, then it stays up and Starting (never hibernated), Progressing says StartDeadlineExceeded with the scheduler message, a Warning Event says so once, and a spec change starts the clock again', async () => {
    await createInstance(ns.name, 'stuck', {
      plan: 'paid',
      hibernation: { idleAfter: '1s' },
      addons: { regionPinning: { region: 'nowhere-1' } },
    });
    const pastDeadline = (i: CouchInstance) =>
      conditionOf(i, 'Progressing')?.reason === 'StartDeadlineExceeded';
    const stuck = await waitForInstance(
      ns.name,
      'stuck',
      'Progressing StartDeadlineExceeded',
      pastDeadline,
      30_000,
    );
    const progressing = conditionOf(stuck, 'Progressing');
    expect(progressing).toMatchObject({
      status: 'False',
      message: expect.stringMatching(
        /^CouchDB has not answered within the start deadline \(3s\): its pod cannot be scheduled: 0\/2 nodes are available: .*node affinity.*\. The instance stays up and this clears once it answers$/,
      ),
    });
    // The more precise reason stays on Degraded; Active still says it is starting, not idle.
    expect(conditionOf(stuck, 'Degraded')).toMatchObject({ status: 'True', reason: 'Unschedulable' });
    expect(conditionOf(stuck, 'Active')).toMatchObject({ status: 'True', reason: 'Starting' });

    // Well past idleAfter and the deadline: still up, and the Event was written once.
    await sleep(2_000);
    const later = await readInstance(ns.name, 'stuck');
    expect(later.status?.phase).toBe('Starting');
    expect(later.status?.hibernatedAt).toBeUndefined();
    expect((await readStatefulSet(ns.name, 'stuck')).spec?.replicas).toBe(1);
    expect(conditionOf(later, 'Progressing')).toEqual(progressing);
    const warnings = () =>
      eventsFor(ns.name, 'stuck').then((events) =>
        events.filter((e) => e.reason === 'StartDeadlineExceeded'),
      );
    expect(await warnings()).toEqual([
      expect.objectContaining({ type: 'Warning', count: 1, message: progressing?.message }),
    ]);

    // A new generation is a new attempt: Progressing turns True again, then the deadline passes anew.
    await patchInstance(ns.name, 'stuck', { spec: { hibernation: { idleAfter: '2s' } } });
    await waitForInstance(
      ns.name,
      'stuck',
      'Progressing True again',
      (i) => conditionOf(i, 'Progressing')?.status === 'True',
      15_000,
    );
    await waitForInstance(ns.name, 'stuck', 'Progressing StartDeadlineExceeded again', pastDeadline, 15_000);
    await waitFor(
      'a second StartDeadlineExceeded Event',
      async () => ((await warnings()).reduce((sum, e) => sum + (e.count ?? 1), 0) === 2 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 200 },
    );
  }, 60_000);
});
