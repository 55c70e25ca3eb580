import { waitFor } from '../../../local/wait.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  eventsFor,
  hasPhase,
  metricValue,
  startTestOperator,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const RECONCILES = 'settee_reconcile_total{controller="couch-instance",outcome="requeue"}';

/** Which replica wrote the instance's CredentialsCreated Event. */
async function credentialsWrittenBy(namespace: string, name: string): Promise<string | undefined> {
  const events = await eventsFor(namespace, name);
  return events.find((event) => event.reason === 'CredentialsCreated')?.reportingInstance;
}

/**
 * The harness's 2 s Lease is lost to a starved renewal at a load of 40 (replica-b led while replica-a
 * still reconciled); here a stop hands the Lease over (released), so a longer one costs nothing.
 */
const LEASE_ENV = {
  SETTEE_LEASE_DURATION: '10s',
  SETTEE_LEASE_RENEW_DEADLINE: '8s',
  SETTEE_LEASE_RETRY_PERIOD: '300ms',
};

describe('two operator replicas', () => {
  const ns = useTestNamespace('couch-leader');
  const operators: RunningOperator[] = [];

  afterAll(() => Promise.all(operators.map((operator) => operator.stop())));

  it('when both run, then only the Lease holder reconciles; when it stops, the other takes over', async () => {
    const first = await startTestOperator({ namespace: ns.name, identity: 'replica-a', env: LEASE_ENV });
    operators.push(first);
    await waitFor('replica-a to lead', async () => (first.isLeading() ? true : undefined), {
      timeoutMs: 15_000,
    });
    const second = await startTestOperator({ namespace: ns.name, identity: 'replica-b', env: LEASE_ENV });
    operators.push(second);

    await createInstance(ns.name, 'one', { hibernation: { idleAfter: '1h' } });
    await waitForInstance(ns.name, 'one', 'phase Starting', hasPhase('Starting'));
    expect(await credentialsWrittenBy(ns.name, 'one')).toBe('replica-a');
    expect(second.isLeading()).toBe(false);
    expect(await metricValue(second, RECONCILES)).toBe(0);
    expect(await metricValue(first, RECONCILES)).toBeGreaterThan(0);

    await first.stop();
    await waitFor('replica-b to lead', async () => (second.isLeading() ? true : undefined), {
      timeoutMs: 15_000,
    });
    await createInstance(ns.name, 'two', { hibernation: { idleAfter: '1h' } });
    await waitForInstance(ns.name, 'two', 'phase Starting', hasPhase('Starting'));
    expect(await credentialsWrittenBy(ns.name, 'two')).toBe('replica-b');
    expect(await metricValue(second, RECONCILES)).toBeGreaterThan(0);
  });
});
