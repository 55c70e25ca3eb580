import type { WorkflowContext } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';
import { recordedSteps } from '../../helpers/queue/workflow-steps.js';

/** The trigger's Upstash-Retry-Delay below: 2 s before the first retry, 4 s before the second. */
const RETRY_DELAY = '2000 * (1 + retried)';
/** How much later than its delay a retry may come on a loaded machine: less than one delay step. */
const RETRY_SLACK_MS = 1_900;

/**
 * Failed steps through the unchanged @upstash/workflow 1.3.3: a step whose function throws is
 * answered 500 by the SDK's endpoint, and the gateway retries that delivery as the trigger said
 * (its retries and its retryDelay, which the SDK sends only on the trigger: the run keeps them
 * for every step), or gives the run to its failure function or failureUrl. A retried step does
 * not run the steps before it again: their results come with the delivery.
 */
describe('workflow step failures and retries with the @upstash/workflow SDK', () => {
  const ran = new Map<string, string[]>();
  const seen = new Map<string, Record<string, unknown>>();
  /** When each execution of a run's step function began, per `${runId}/${step}`. */
  const executions = new Map<string, number[]>();

  const record = (context: Pick<WorkflowContext<unknown>, 'workflowRunId'>, step: string): void => {
    ran.set(context.workflowRunId, [...(ran.get(context.workflowRunId) ?? []), step]);
  };
  const executed = (runId: string, step: string): number[] => executions.get(`${runId}/${step}`) ?? [];

  const workflow = useWorkflowSuite(() => ({
    workflows: {
      failing: {
        route: async (context) => {
          await context.run('boom', () => {
            record(context, 'boom');
            throw new Error(`boom for ${JSON.stringify(context.requestPayload)}`);
          });
        },
        options: {
          failureFunction: async ({ context, failStatus, failResponse }) => {
            seen.set(context.workflowRunId, { failStatus, failResponse, payload: context.requestPayload });
          },
        },
      },
      midway: {
        route: async (context) => {
          // Step three throws on its first `failures` executions.
          const { failures } = context.requestPayload as { failures: number };
          const step = (name: string, result: () => number) =>
            context.run(name, () => {
              const key = `${context.workflowRunId}/${name}`;
              executions.set(key, [...executed(context.workflowRunId, name), Date.now()]);
              const attempt = executed(context.workflowRunId, name).length;
              if (name === 'three' && attempt <= failures)
                throw new Error(`three fails on attempt ${attempt}`);
              return result();
            });
          const one = await step('one', () => 1);
          const two = await step('two', () => one + 1);
          const three = await step('three', () => two + 1);
          return { four: await step('four', () => three + 1) };
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, runs, finished } = workflow;

  it('when a step keeps failing with retries 0, then the failureFunction gets the error and the payload and the run ends RUN_FAILED', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('failing'),
      body: { order: 7 },
      retries: 0,
    });
    const run = await finished(workflowRunId);
    expect(run.state).toBe('RUN_FAILED');
    await waitFor('the failure function ran', async () => seen.get(workflowRunId), { timeoutMs: 10_000 });
    expect(seen.get(workflowRunId)).toEqual({
      failStatus: 500,
      failResponse: 'boom for {"order":7}',
      payload: { order: 7 },
    });
    expect(ran.get(workflowRunId)).toEqual(['boom']);
  });

  it('when a step keeps failing and the trigger names a failureUrl, then that URL gets the signed failure callback with the run id', async () => {
    const failureUrl = `${suite.receiver.baseUrl}/failures`;
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.plainUrl('failing'),
      body: { order: 8 },
      retries: 0,
      failureUrl,
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_FAILED');
    await suite.delivered(1);
    const [failure] = suite.receiver.deliveries;
    expect(failure!.headers['upstash-workflow-runid']).toBe(workflowRunId);
    expect(failure!.headers['upstash-workflow-failure-callback']).toBe('true');
    const body = JSON.parse(failure!.body.toString()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 500, workflowRunId, url: workflow.endpoints.plainUrl('failing') });
    expect(Buffer.from(body.sourceBody as string, 'base64').toString()).toBe('{"order":8}');
  });

  it('when the third step of a run is answered 500 once, then the run resumes and finishes with every result, the steps before it not run again', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.plainUrl('midway'),
      body: { failures: 1 },
    });
    const run = await finished(workflowRunId);
    expect(run.state).toBe('RUN_SUCCESS');
    expect(JSON.parse(run.response ?? '')).toEqual({ four: 4 });
    expect(['one', 'two', 'three', 'four'].map((name) => executed(workflowRunId, name).length)).toEqual([
      1, 1, 2, 1,
    ]);
    const recorded = await recordedSteps(runs(), workflowRunId);
    expect(recorded.map((step) => [step.stepName, step.out])).toEqual([
      ['one', '1'],
      ['two', '2'],
      ['three', '3'],
      ['four', '4'],
    ]);
  });

  it("when a step keeps failing and the trigger allows 2 retries with a retryDelay, then it is retried twice at the expression's delays and the run ends RUN_FAILED", async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('midway'),
      body: { failures: 3 },
      retries: 2,
      retryDelay: RETRY_DELAY,
    });
    const run = await finished(workflowRunId, 30_000);
    expect(run.state).toBe('RUN_FAILED');
    expect(run.config.retryDelay).toBe(RETRY_DELAY);
    expect(['one', 'two', 'four'].map((name) => executed(workflowRunId, name).length)).toEqual([1, 1, 0]);
    const [first, second, third, ...more] = executed(workflowRunId, 'three');
    expect(more).toEqual([]);
    // retried is 0 before the first retry: 2 s, then 4 s.
    for (const [gap, delay] of [
      [second! - first!, 2_000],
      [third! - second!, 4_000],
    ] as const) {
      expect(gap).toBeGreaterThanOrEqual(delay);
      expect(gap).toBeLessThan(delay + RETRY_SLACK_MS);
    }
  });

  it('when a trigger names a retryDelay that is not an expression, then client.trigger throws the 400 naming it and no run is stored', async () => {
    const order = queueKeys(suite.config.keyPrefix).workflowRunOrder;
    const before = await suite.inspect.zcard(order);
    const refused = await client()
      .trigger({
        url: workflow.endpoints.expressUrl('midway'),
        body: { failures: 0 },
        retryDelay: '2000 * (1 + retried',
      })
      .then(
        () => undefined,
        (err: unknown) => err as { status?: number; message: string },
      );
    expect(refused?.status).toBe(400);
    expect(JSON.parse(refused!.message)).toEqual({
      error: 'batch item 0: Upstash-Retry-Delay "2000 * (1 + retried" is not a valid expression: expected )',
    });
    expect(await suite.inspect.zcard(order)).toBe(before);
  });
});
