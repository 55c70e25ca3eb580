import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';

interface Plan {
  /** One sequential step per entry, returning that many bytes. */
  sizes: number[];
  /** Then a parallel group of this many steps. */
  width?: number;
}

const MAX_STEPS = 4;
const MAX_CONTEXT_BYTES = 4_096;
const MAX_BATCH = 5;

/**
 * A workflow run's limits through the unchanged @upstash/workflow 1.3.3: the steps a run takes
 * (spec.limits.maxWorkflowSteps, Upstash's 1,000 by default) and its context, the payload and
 * every step's body (maxWorkflowContextBytes, Upstash's 100 MB), lowered here to be reached; and
 * a parallel group wider than a batch takes. A step past a limit is refused with 412, which the
 * SDK turns into a non-retryable failure: the run fails at once with the limit's message, its
 * failure function gets it, and nothing of the refused publish is stored.
 */
describe('workflow run limits with the @upstash/workflow SDK', () => {
  const ran = new Map<string, string[]>();
  const failures = new Map<string, string>();
  const workflow = useWorkflowSuite(
    () => ({
      workflows: {
        steps: {
          route: async (context) => {
            const { sizes, width } = context.requestPayload as Plan;
            const record = (name: string) =>
              ran.set(context.workflowRunId, [...(ran.get(context.workflowRunId) ?? []), name]);
            for (const [i, size] of sizes.entries())
              await context.run(`step-${i}`, () => {
                record(`step-${i}`);
                return 'x'.repeat(size);
              });
            if (width !== undefined)
              await Promise.all(
                Array.from({ length: width }, (_, i) =>
                  context.run(`branch-${i}`, () => {
                    record(`branch-${i}`);
                    return i;
                  }),
                ),
              );
          },
          options: {
            failureFunction: ({ context, failResponse }) => {
              failures.set(context.workflowRunId, failResponse);
            },
          },
        },
      },
    }),
    {
      limits: { maxWorkflowSteps: MAX_STEPS, maxWorkflowContextBytes: MAX_CONTEXT_BYTES },
      // A handler slowed by a loaded machine past the tests' 2 s delivery timeout would be
      // delivered again (at-least-once), re-running a step function and re-publishing its step;
      // reclaiming must wait longer than a delivery may take.
      config: { maxBatchSize: MAX_BATCH, deliveryTimeoutMs: 15_000, reclaimIdleMs: 20_000 },
    },
  );
  const { client, runs, finished } = workflow;

  const run = async (plan: Plan) => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('steps'),
      body: plan,
      retries: 2,
    });
    return { runId: workflowRunId, run: await finished(workflowRunId, 30_000) };
  };
  const failureOf = (runId: string) =>
    waitFor(`${runId}'s failure function`, async () => failures.get(runId), { timeoutMs: 20_000 });

  it('when a run takes as many steps as maxWorkflowSteps, then it succeeds; one more step fails it with a 412 naming the limit, and the step is not stored', async () => {
    const atLimit = await run({ sizes: [1, 1, 1, 1] });
    expect(atLimit.run.state).toBe('RUN_SUCCESS');
    expect(await runs().steps(atLimit.runId)).toHaveLength(1 + MAX_STEPS);

    const over = await run({ sizes: [1, 1, 1, 1, 1, 1] });
    expect(over.run.state).toBe('RUN_FAILED');
    // Not retried (retries: 2): the SDK answers the 412 as a non-retryable error.
    const failure = JSON.parse(over.run.failure!) as { status: number; body: string };
    expect(failure.status).toBe(489);
    expect(failure.body).toContain(`has ${MAX_STEPS} steps, ${MAX_STEPS} at most (maxWorkflowSteps)`);
    expect(await failureOf(over.runId)).toContain('maxWorkflowSteps');
    expect(await runs().steps(over.runId)).toHaveLength(1 + MAX_STEPS);
    // The fifth step's function ran (its result is what was refused); the sixth never. A set:
    // at-least-once delivery may run a step function again.
    expect(new Set(ran.get(over.runId))).toEqual(new Set(['step-0', 'step-1', 'step-2', 'step-3', 'step-4']));
  }, 90_000);

  it("when a step's result would take the run's context past maxWorkflowContextBytes, then the run fails with a 412 naming the limit and the step is not stored", async () => {
    const { runId, run: ended } = await run({ sizes: [1_500, 1_500, 1_500] });
    expect(ended.state).toBe('RUN_FAILED');
    const failure = JSON.parse(ended.failure!) as { status: number; body: string };
    expect(failure.status).toBe(489);
    expect(failure.body).toContain(`context would pass ${MAX_CONTEXT_BYTES} bytes (maxWorkflowContextBytes`);
    expect(await runs().steps(runId)).toHaveLength(3);
    const context = await workflow.queue.inspect.hget(
      queueKeys(workflow.queue.config.keyPrefix).workflowRun(runId),
      'contextBytes',
    );
    expect(Number(context)).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
  }, 90_000);

  it('when a parallel group does not fit in the steps left, then none of its steps is stored and the run fails; a group wider than a batch fails it too, not silently stopped', async () => {
    const group = await run({ sizes: [1], width: MAX_STEPS });
    expect(group.run.state).toBe('RUN_FAILED');
    expect(JSON.parse(group.run.failure!).body).toContain('maxWorkflowSteps');
    // The payload and step-0: the group's plan steps were refused together.
    expect(await runs().steps(group.runId)).toHaveLength(2);
    expect(new Set(ran.get(group.runId))).toEqual(new Set(['step-0']));

    const wide = await run({ sizes: [], width: MAX_BATCH + 1 });
    expect(wide.run.state).toBe('RUN_FAILED');
    expect(JSON.parse(wide.run.failure!).body).toContain(
      `more than the allowed ${MAX_BATCH}: a workflow's batch (a parallel group's steps, or the runs one trigger starts) takes at most that many`,
    );
    expect(await runs().steps(wide.runId)).toHaveLength(1);
  }, 90_000);

  it('when a trigger carries a payload larger than maxWorkflowContextBytes, or more runs than a batch takes, then it is refused with 412 and no run is stored', async () => {
    const order = queueKeys(workflow.queue.config.keyPrefix).workflowRunOrder;
    const before = await workflow.queue.inspect.zcard(order);
    await expect(
      client().trigger({
        url: workflow.endpoints.expressUrl('steps'),
        body: 'x'.repeat(MAX_CONTEXT_BYTES + 1),
      }),
    ).rejects.toMatchObject({ status: 412, message: expect.stringContaining('maxWorkflowContextBytes') });
    expect(await workflow.queue.inspect.zcard(order)).toBe(before);

    // One trigger of more runs than a batch takes: the same 412, worded for a trigger too.
    await expect(
      client().trigger(
        Array.from({ length: MAX_BATCH + 1 }, () => ({
          url: workflow.endpoints.expressUrl('steps'),
          body: {},
        })),
      ),
    ).rejects.toMatchObject({ status: 412, message: expect.stringContaining('the runs one trigger starts') });
    expect(await workflow.queue.inspect.zcard(order)).toBe(before);
  }, 60_000);
});
