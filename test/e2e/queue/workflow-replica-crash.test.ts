import type { Redis } from 'ioredis';
import { Client } from '@upstash/workflow';
import { renderQueueUrl } from '../../../api/queue-binding.js';
import type { ManagedProcess } from '../../../local/process.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/core/keys.js';
import { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startWorkflowEndpoints, type WorkflowEndpoints } from '../../helpers/queue/workflow-endpoints.js';

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
  let redis: RedisServer;
  let inspect: Redis;
  let target: QueueTarget;
  let endpoints: WorkflowEndpoints;
  const processes: ManagedProcess[] = [];
  /** How often each run's step body ran: `${runId}/${step}`. */
  const executions = new Map<string, number>();

  const startGateway = async (): Promise<QueueGatewayProcess> => {
    const gateway = await spawnQueueGateway({
      targets: [target],
      env: {
        SETTEE_QUEUE_KEY_PREFIX: KEY_PREFIX,
        SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
        // Long enough that no delivery the survivor holds times out or is reclaimed from it on a
        // starved machine: the bound below counts only what the dead replica left. 35 s of
        // reclaim still lets its deliveries be taken over well within the 90 s wait.
        SETTEE_QUEUE_DELIVERY_TIMEOUT_MS: '30000',
        SETTEE_QUEUE_RECLAIM_IDLE_MS: '35000',
        SETTEE_QUEUE_POLL_INTERVAL_MS: '100',
        SETTEE_QUEUE_BLOCK_MS: '200',
      },
    });
    processes.push(gateway.proc);
    return gateway;
  };

  beforeAll(async () => {
    redis = await startRedis();
    inspect = connectTestRedis(redis);
    target = testQueueTarget(redis);
  });
  afterAll(async () => {
    await endpoints?.close();
    await Promise.all(processes.map((p) => p.stop(1_000)));
    inspect?.disconnect();
    await redis?.stop();
  });

  it('when one of two replicas is killed mid-run, then every run finishes with all its steps, a step running again only for a delivery the dead one held', async () => {
    const [doomed, survivor] = [await startGateway(), await startGateway()];
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
      const recorded = new Set(
        (await runs.steps(runId))
          .slice(1)
          .map(
            (step) =>
              (JSON.parse(Buffer.from(step.body, 'base64').toString()) as { stepName: string }).stepName,
          ),
      );
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
