import http from 'node:http';
import { COUCHDB_PORT } from '../../../api/contract.js';
import { allocatePodAddress } from '../../../local/kubelet-stand-in/loopback-address.js';
import { waitFor } from '../../../local/wait.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { useTestNamespace } from '../../helpers/kube.js';
import {
  createInstance,
  eventsFor,
  hasPhase,
  metricValue,
  readInstance,
  readStatefulSet,
  renewActivity,
  reportPodReady,
  startTestOperator,
  testClients,
  waitForEventReasons,
  waitForInstance,
} from '../../helpers/operator/couch-instance-harness.js';

const IDLE_AFTER_MS = 2_000;
/** How long the instance takes to say whether replication jobs run, on the first question. */
const SLOW_ANSWER_MS = 300;

interface Question {
  at: number;
  /** What the API server said while the operator waited for this answer. */
  replicas?: number | undefined;
  hibernatedAt?: string | undefined;
  hibernations?: number;
}

/**
 * Before hibernating an idle instance the operator asks it about replication jobs, which takes
 * time; a request arriving at the gateway meanwhile renews the activity Lease. Here the instance's
 * /_scheduler/jobs is a test server standing in for CouchDB (no kubelet stand-in runs for this
 * namespace: the test plays the kubelet's part, reporting the StatefulSet controller's pod Running
 * and Ready at the test server's address, so the idle clock starts), and the Lease is renewed while
 * the first answer is held back, as the gateway would on a request.
 */
describe('hibernating an instance that becomes active during the idle check', () => {
  const ns = useTestNamespace('couch-hibernation-race');
  const name = 'raced';
  let operator: RunningOperator;
  let scheduler: http.Server;
  let podIP: string;
  let renewedAt = 0;
  const questions: Question[] = [];
  let asked = 0;

  beforeAll(async () => {
    scheduler = http.createServer((req, res) => {
      void answer(req.url ?? '').then((body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    });
    podIP = await allocatePodAddress(COUCHDB_PORT, new Set());
    await new Promise<void>((resolve) => scheduler.listen(COUCHDB_PORT, podIP, resolve));
    operator = await startTestOperator({ namespace: ns.name });
  });
  afterAll(async () => {
    await operator?.stop();
    await new Promise((resolve) => scheduler.close(resolve));
  });

  /** No replication job ever runs; the first answer comes late, after a Lease renewal. */
  async function answer(path: string): Promise<object> {
    if (path !== '/_scheduler/jobs') return { error: 'not_found' };
    const question: Question = { at: Date.now() };
    asked += 1;
    if (asked === 1) {
      await renewActivity(ns.name, name);
      renewedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
    } else {
      question.replicas = (await readStatefulSet(ns.name, name)).spec?.replicas;
      question.hibernatedAt = (await readInstance(ns.name, name)).status?.hibernatedAt;
      question.hibernations = await metricValue(operator, 'settee_couch_hibernations_total');
    }
    // Recorded once complete: the test reads it as soon as it is there.
    questions.push(question);
    return { total_rows: 0, offset: 0, jobs: [] };
  }

  it('when the activity Lease is renewed while the instance answers, then it is not hibernated, and hibernates a full idleAfter later', async () => {
    await createInstance(ns.name, name, { hibernation: { idleAfter: `${IDLE_AFTER_MS / 1000}s` } });
    await waitForInstance(ns.name, name, 'phase Starting', hasPhase('Starting'));
    // The idle clock starts at Ready: the first idle check comes idleAfter after this.
    await reportPodReady(ns.name, name, podIP);
    await waitForInstance(ns.name, name, 'phase Running', hasPhase('Running'));

    await waitFor('a second idle check', async () => (questions.length >= 2 ? true : undefined), {
      timeoutMs: 4 * IDLE_AFTER_MS + 20_000,
    });
    const [, second] = questions;
    // Up, and never hibernated, while it was asked again: the renewal counted.
    expect(second).toMatchObject({ replicas: 1, hibernatedAt: undefined, hibernations: 0 });
    // The second question is the idle deadline that the renewal set.
    expect(second!.at).toBeGreaterThanOrEqual(renewedAt + IDLE_AFTER_MS - 100);

    // The StatefulSet controller deletes the pod; no provisioner runs here, so its claim is
    // unbound and the pod was never scheduled, and the API server removes it at once.
    const { core } = testClients();
    await waitFor(
      'the StatefulSet controller to delete the pod',
      async () =>
        core.readNamespacedPod({ namespace: ns.name, name: `${name}-0` }).then(
          () => undefined,
          () => true,
        ),
      // The StatefulSet controller's round trip, after the operator's scale to zero.
      { timeoutMs: 4 * IDLE_AFTER_MS + 20_000 },
    );
    const hibernated = await waitForInstance(ns.name, name, 'phase Hibernated', hasPhase('Hibernated'));
    expect(Date.parse(hibernated.status?.hibernatedAt ?? '')).toBeGreaterThanOrEqual(second!.at - 1_000);
    expect((await readStatefulSet(ns.name, name)).spec?.replicas).toBe(0);
    await waitForEventReasons(ns.name, name, ['Hibernated']);
    // A duplicate would come from a second hibernation pass racing the first, which the operator
    // runs within milliseconds of it (a requeue, or the watch of its own status write); 1 s past the
    // first Event is the margin assumed for it to have been written, on a loaded machine too.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const hibernatedEvents = (await eventsFor(ns.name, name)).filter((e) => e.reason === 'Hibernated');
    expect(hibernatedEvents).toHaveLength(1);
    // The recorder counts a repeat of the same Event on it rather than writing another.
    expect(hibernatedEvents[0]!.count ?? 1).toBe(1);
    expect(await metricValue(operator, 'settee_couch_hibernations_total')).toBe(1);
  }, 120_000);
});
