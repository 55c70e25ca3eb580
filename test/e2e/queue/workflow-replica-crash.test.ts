import { Client } from '@upstash/workflow';
import { renderQueueUrl } from '../../../api/queue-binding.js';
import { waitFor } from '../../../local/wait.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/core/keys.js';
import { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';
import { useQueueReplicas } from '../../helpers/queue/queue-replicas.js';
import { startWorkflowEndpoints, type WorkflowEndpoints } from '../../helpers/queue/workflow-endpoints.js';
import { recordedSteps } from '../../helpers/queue/workflow-steps.js';

const KEY_PREFIX = '{wf-crash}:';
const RUNS = 12;
const STEPS = 6;
/** Each step's body takes this long, so deliveries are in flight when the replica dies. */
const STEP_MS = 150;

/**
 * A workflow replica dies with SIGKILL mid-run: two gateway processes share the binding's Redis
 * and both deliver; the runs' endpoints (the unchanged @upstash/workflow serve()) publish their
 * steps to the survivor. Every run finishes with its result, every step is recorded, and a step
 * body runs again only for a delivery the dead replica held unacknowledged (at least once, as
 * the SDK documents: a step may run more than once).
 */
describe('a gateway replica killed with SIGKILL while workflow runs go', () => {
  const replicas = useQueueReplicas({
    keyPrefix: KEY_PREFIX,
    env: {
      // Long enough that no delivery the survivor holds times out or is reclaimed from it on a
      // starved machine: the bound below counts only what the dead replica left. Its deliveries
      // are taken over once its consumer lease (5 s) lapses, not by reclaim.
      SETTEE_QUEUE_DELIVERY_TIMEOUT_MS: '30000',
      SETTEE_QUEUE_RECLAIM_IDLE_MS: '35000',
      SETTEE_QUEUE_POLL_INTERVAL_MS: '100',
      SETTEE_QUEUE_BLOCK_MS: '200',
    },
  });
  let endpoints: WorkflowEndpoints;
  /** How often each run's step body ran: `${runId}/${step}`. */
  const executions = new Map<string, number>();

  afterAll(async () => {
    await endpoints?.close();
  });

  it('when one of two replicas is killed mid-run, then every run finishes with all its steps, a step running again only for a delivery the dead one held', async () => {
    const { target, inspect } = replicas;
    const [doomed, survivor] = [
      await replicas.startReplica('doomed'),
      await replicas.startReplica('survivor'),
    ];
    endpoints = await startWorkflowEndpoints({
      target,
      queueUrl: renderQueueUrl(survivor.baseUrl, target),
      workflows: {
        chain: {
          route: async (context) => {
            let total = 0;
            for (let i = 0; i < STEPS; i++)
              total = await context.run(`step-${i}`, async () => {
                const key = `${context.workflowRunId}/step-${i}`;
                executions.set(key, (executions.get(key) ?? 0) + 1);
                await new Promise((resolve) => setTimeout(resolve, STEP_MS));
                return total + i;
              });
            return { total };
          },
        },
      },
    });
    const client = new Client({ baseUrl: renderQueueUrl(doomed.baseUrl, target), token: target.token });
    const triggered = await client.trigger(
      Array.from({ length: RUNS }, (_, n) => ({ url: endpoints.expressUrl('chain'), body: { n } })),
    );
    const workflowRunIds = triggered.map((r) => r.workflowRunId);
    const executed = () => [...executions.values()].reduce((a, b) => a + b, 0);
    await waitFor(
      'a third of the steps run',
      async () => (executed() >= (RUNS * STEPS) / 3 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 20,
      },
    );
    process.kill(doomed.proc.pid, 'SIGKILL');
    expect(await doomed.proc.exited).toBe('SIGKILL');
    expect(executed()).toBeLessThan(RUNS * STEPS);
    // What the dead replica held unacknowledged (and what the survivor held at that moment): the
    // most deliveries that can run a step body again.
    const [heldAtKill] = (await inspect.xpending(queueKeys(KEY_PREFIX).stream, DELIVERY_GROUP)) as [number];

    const runs = new WorkflowRunStore(inspect, queueKeys(KEY_PREFIX));
    const records = await waitFor(
      `${RUNS} runs to finish`,
      async () => {
        const all = await Promise.all(workflowRunIds.map((id) => runs.get(id)));
        return all.every((r) => r?.state === 'RUN_SUCCESS') ? all : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    const expectedTotal = (STEPS * (STEPS - 1)) / 2;
    for (const record of records) expect(JSON.parse(record!.response!)).toEqual({ total: expectedTotal });
    for (const runId of workflowRunIds) {
      const recorded = new Set((await recordedSteps(runs, runId)).map((step) => step.stepName));
      expect([runId, [...recorded].sort()]).toEqual([
        runId,
        Array.from({ length: STEPS }, (_, i) => `step-${i}`),
      ]);
      for (let i = 0; i < STEPS; i++) expect(executions.get(`${runId}/step-${i}`)).toBeGreaterThanOrEqual(1);
    }
    const again = executed() - RUNS * STEPS;
    expect(again).toBeLessThanOrEqual(heldAtKill);
  }, 240_000);
});
