import type { RunningOperator } from '../../../operator/operator.js';
import { couchInstanceNames } from '../../../operator/resources/couch-instance/names.js';
import { toKubeApiError } from '../../../kube/errors.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  conditionOf,
  createInstance,
  eventsFor,
  instanceApi,
  readStatefulSet,
  startTestOperator,
  testClients,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

async function hasStatefulSet(namespace: string, name: string): Promise<boolean> {
  try {
    await readStatefulSet(namespace, couchInstanceNames(name).statefulSet);
    return true;
  } catch (err) {
    if (toKubeApiError(err)?.statusCode === 404) return false;
    throw err;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Free instances per namespace where no ResourceQuota refuses them (the real operator and API
 * server): the operator leaves the one past the limit uncreated, says why, and creates it once
 * there is room.
 */
describe('the free-instance limit of a namespace without a quota', () => {
  const ns = useTestNamespace('couch-limit');
  let operator: RunningOperator;

  beforeAll(async () => {
    operator = await startTestOperator({
      namespace: ns.name,
      env: { SETTEE_FREE_INSTANCES_PER_NAMESPACE: '2' },
    });
  });

  afterAll(async () => {
    await operator?.stop();
  });

  it('when a third free instance is created with a limit of 2, then it is left uncreated with InstanceLimitExceeded and a Warning Event, paid ones are not limited, and a delete makes room', async () => {
    await createInstance(ns.name, 'first', { plan: 'free' });
    await waitUntil(() => hasStatefulSet(ns.name, 'first'), 20_000);
    await createInstance(ns.name, 'second', {});
    await waitUntil(() => hasStatefulSet(ns.name, 'second'), 20_000);
    await createInstance(ns.name, 'paid', { plan: 'paid' });
    await waitUntil(() => hasStatefulSet(ns.name, 'paid'), 20_000);

    await createInstance(ns.name, 'third', { plan: 'free' });
    const refused = await waitForInstance(
      ns.name,
      'third',
      'refused for the instance limit',
      (instance) => conditionOf(instance, 'Degraded')?.reason === 'InstanceLimitExceeded',
    );
    expect(refused.status?.phase).toBe('Pending');
    expect(conditionOf(refused, 'Degraded')?.message).toContain('the free limit is 2');
    expect(conditionOf(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'InstanceLimitExceeded' });
    expect(await hasStatefulSet(ns.name, 'third')).toBe(false);
    const { core } = testClients();
    const secrets = await core.listNamespacedSecret({ namespace: ns.name });
    expect(secrets.items.map((s) => s.metadata?.name)).not.toContain(couchInstanceNames('third').adminSecret);
    await waitUntil(
      async () =>
        (await eventsFor(ns.name, 'third')).some(
          (event) => event.reason === 'InstanceLimitExceeded' && event.type === 'Warning',
        ),
      10_000,
    );

    // The first free instance goes: the waiting one is created on its next look (within 15 s).
    await testClients().custom.deleteNamespacedCustomObject({ ...instanceApi(ns.name), name: 'first' });
    await waitUntil(() => hasStatefulSet(ns.name, 'third'), 40_000);
    const admitted = await waitForInstance(
      ns.name,
      'third',
      'created',
      (instance) => conditionOf(instance, 'Degraded')?.reason !== 'InstanceLimitExceeded',
    );
    expect(admitted.status?.phase).not.toBe('Failed');
  }, 90_000);
});
