import type { RunningOperator } from '../../../operator/operator.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  eventsFor,
  hasPhase,
  startTestKubelet,
  startTestOperator,
  testClients,
  waitForInstance,
} from './couch-instance-harness.js';

/**
 * Region pinning through the real kube-scheduler: the test control plane has two stand-in nodes,
 * one in each of two regions (TEST_NODES).
 */
describe('CouchInstance scheduling', () => {
  const ns = useTestNamespace('couch-scheduling');
  let operator: RunningOperator;
  let kubelet: { stop(): Promise<void> };

  beforeAll(async () => {
    kubelet = await startTestKubelet(ns.name);
    operator = await startTestOperator({ namespace: ns.name });
  });
  afterAll(async () => {
    await operator?.stop();
    await kubelet?.stop();
  });

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
});
