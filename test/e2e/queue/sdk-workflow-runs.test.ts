import type { WorkflowContext } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';
import { recordedSteps } from '../../helpers/queue/workflow-steps.js';
import { startWorkflowEndpoints } from '../../helpers/queue/workflow-endpoints.js';

/**
 * Workflow runs through the unchanged @upstash/workflow 1.3.3: its Client triggers through
 * replica-a, the endpoints' SDK talks to replica-b, and both replicas deliver. Each step function
 * records that it ran; the runs' states are read back from the binding's database.
 */
describe('workflow runs with the @upstash/workflow SDK', () => {
  /** Per run id: the step names in the order their functions ran, and what the steps saw. */
  const ran = new Map<string, string[]>();
  const seen = new Map<string, Record<string, unknown>>();
  let concurrent = 0;
  let mostConcurrent = 0;

  const record = (context: Pick<WorkflowContext<unknown>, 'workflowRunId'>, step: string): void => {
    ran.set(context.workflowRunId, [...(ran.get(context.workflowRunId) ?? []), step]);
  };
  const note = (
    context: Pick<WorkflowContext<unknown>, 'workflowRunId'>,
    what: Record<string, unknown>,
  ): void => {
    seen.set(context.workflowRunId, { ...seen.get(context.workflowRunId), ...what });
  };

  const workflow = useWorkflowSuite(() => ({
    workflows: {
      sequential: {
        route: async (context) => {
          const { n } = context.requestPayload as { n: number };
          const added = await context.run('add', () => {
            record(context, 'add');
            return n + 1;
          });
          const doubled = await context.run('double', () => {
            record(context, 'double');
            return added * 2;
          });
          await context.run('report', () => {
            record(context, 'report');
            note(context, {
              header: context.headers.get('x-team'),
              label: context.label,
              createdAt: context.workflowRunCreatedAt,
            });
          });
          return { doubled };
        },
      },
      sleepy: {
        route: async (context) => {
          const started = await context.run('start', () => Date.now());
          await context.sleep('nap', 1);
          const wakeAt = await context.run('after-nap', () => {
            note(context, { napped: Date.now() - started });
            return Math.ceil(Date.now() / 1000) + 1;
          });
          await context.sleepUntil('until', wakeAt);
          await context.run('after-until', () => note(context, { lateBy: Date.now() - wakeAt * 1000 }));
        },
      },
      parallel: {
        route: async (context) => {
          const [x, y] = await Promise.all([
            context.run('x', () => {
              record(context, 'x');
              return 2;
            }),
            context.run('y', () => {
              record(context, 'y');
              return 3;
            }),
            context.sleep('pause', 1),
          ]);
          await context.run('sum', () => {
            record(context, 'sum');
            note(context, { sum: x + y });
          });
        },
      },
      napping: {
        route: async (context) => {
          const started = await context.run('start', () => Date.now());
          await Promise.all([context.sleep('short', 2), context.sleep('long', 3)]);
          await context.run('after', () => note(context, { napped: Date.now() - started }));
        },
      },
      cancelling: {
        route: async (context) => {
          await context.run('first', () => record(context, 'first'));
          await context.cancel();
          await context.run('never', () => record(context, 'never'));
        },
      },
      serial: {
        route: async (context) => {
          for (const step of ['one', 'two'])
            await context.run(step, async () => {
              concurrent += 1;
              mostConcurrent = Math.max(mostConcurrent, concurrent);
              await new Promise((resolve) => setTimeout(resolve, 100));
              concurrent -= 1;
              record(context, step);
            });
        },
      },
      big: {
        route: async (context) => {
          const text = await context.run('make', () => 'x'.repeat(80_000));
          await context.run('measure', () => note(context, { length: text.length }));
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, runs, finished } = workflow;

  it('when a run with body, headers and label is triggered, then its steps run once each in order on the Express and the plain endpoint and the run ends RUN_SUCCESS with its result', async () => {
    for (const url of [
      workflow.endpoints.expressUrl('sequential'),
      workflow.endpoints.plainUrl('sequential'),
    ]) {
      const { workflowRunId } = await client().trigger({
        url,
        body: { n: 20 },
        headers: { 'x-team': 'blue' },
        label: 'nightly',
      });
      const run = await finished(workflowRunId);
      expect(run.state).toBe('RUN_SUCCESS');
      expect(JSON.parse(run.response ?? '')).toEqual({ doubled: 42 });
      expect(ran.get(workflowRunId)).toEqual(['add', 'double', 'report']);
      expect(seen.get(workflowRunId)).toEqual({ header: 'blue', label: 'nightly', createdAt: run.createdAt });
    }
  });

  it('when runs are triggered as an array, one with a delay and one with a given run id twice, then each starts once and the delayed one not before its delay', async () => {
    const url = workflow.endpoints.expressUrl('sequential');
    const sent = Date.now();
    const [delayed, named] = await client().trigger([
      { url, body: { n: 1 }, delay: 1 },
      { url, body: { n: 2 }, workflowRunId: `named-${sent}` },
    ]);
    expect(named!.workflowRunId).toBe(`wfr_named-${sent}`);
    await client().trigger({ url, body: { n: 3 }, workflowRunId: `named-${sent}` });
    const [delayedRun, namedRun] = await Promise.all([
      finished(delayed!.workflowRunId),
      finished(named!.workflowRunId),
    ]);
    expect(delayedRun.createdAt).toBeGreaterThanOrEqual(sent);
    expect(ran.get(delayed!.workflowRunId)).toEqual(['add', 'double', 'report']);
    expect(ran.get(named!.workflowRunId)).toEqual(['add', 'double', 'report']);
    expect(JSON.parse(namedRun.response ?? '')).toEqual({ doubled: 6 });
    const steps = await runs().steps(delayed!.workflowRunId);
    // The first step ran once the delay had passed: its result was published a second after the trigger.
    expect(steps[1]!.createdAt - sent).toBeGreaterThanOrEqual(1_000);
  });

  it('when a run sleeps for a second and then until a time, then the steps after each sleep run no earlier', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.plainUrl('sleepy'),
      body: {},
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    const { napped, lateBy } = seen.get(workflowRunId) as { napped: number; lateBy: number };
    expect(napped).toBeGreaterThanOrEqual(1_000);
    expect(lateBy).toBeGreaterThanOrEqual(0);
  });

  it('when a run has parallel steps (two runs and a sleep), then each runs once and the step after them sees both results', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('parallel'),
      body: {},
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    expect([...ran.get(workflowRunId)!].sort()).toEqual(['sum', 'x', 'y']);
    expect(ran.get(workflowRunId)!.at(-1)).toBe('sum');
    expect(seen.get(workflowRunId)).toEqual({ sum: 5 });
  });

  it('when a run sleeps in a parallel group of two sleeps alone, then the step after them runs once the longer one passed, not their sum', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.plainUrl('napping'),
      body: {},
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    const { napped } = seen.get(workflowRunId) as { napped: number };
    expect(napped).toBeGreaterThanOrEqual(3_000);
    expect(napped).toBeLessThan(5_000);
    const recorded = await recordedSteps(runs(), workflowRunId);
    expect(recorded.map((step) => step.stepName).sort()).toEqual(['after', 'long', 'short', 'start']);
  });

  it('when a run calls context.cancel, then it ends RUN_CANCELED and the step after the cancel never runs', async () => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('cancelling'),
      body: {},
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_CANCELED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ran.get(workflowRunId)).toEqual(['first']);
  });

  it('when three runs share a flow-control key with parallelism 1, then no two of their steps run at once', async () => {
    mostConcurrent = 0;
    const triggered = await client().trigger(
      [1, 2, 3].map(() => ({
        url: workflow.endpoints.expressUrl('serial'),
        body: {},
        flowControl: { key: 'workflow-serial', parallelism: 1 },
      })),
    );
    for (const { workflowRunId } of triggered) {
      expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
      expect(ran.get(workflowRunId)).toEqual(['one', 'two']);
    }
    expect(mostConcurrent).toBe(1);
  });

  describe('bad input', () => {
    const ask = (input: {
      method: string;
      path: string;
      replica?: number;
      of?: 'target' | 'other';
      token?: string;
      headers?: Record<string, string>;
      body?: string;
    }) => {
      const target = input.of === 'other' ? suite.otherTarget : suite.target;
      return fetch(`${suite.replicas[input.replica ?? 0]!.queueUrl(target)}${input.path}`, {
        method: input.method,
        headers: { authorization: `Bearer ${input.token ?? target.token}`, ...input.headers },
        ...(input.body === undefined ? {} : { body: input.body }),
      });
    };
    const errorOf = async (response: Response) => ((await response.json()) as { error: string }).error;

    it("when a run's steps are asked with another binding's token, or through another binding with its own, then 401 and 404, never the steps", async () => {
      const { workflowRunId } = await client().trigger({
        url: workflow.endpoints.expressUrl('sleepy'),
        body: {},
      });
      await waitFor('the run started', async () => (await runs().get(workflowRunId)) ?? undefined, {
        timeoutMs: 5_000,
      });
      const path = `/v2/workflows/runs/${workflowRunId}`;
      expect((await ask({ method: 'GET', path })).status).toBe(200);
      expect((await ask({ method: 'GET', path, token: suite.otherTarget.token })).status).toBe(401);
      const elsewhere = await ask({ method: 'GET', path, of: 'other' });
      expect(elsewhere.status).toBe(404);
      expect(await errorOf(elsewhere)).toBe(`workflow run ${workflowRunId} not found`);
      expect((await ask({ method: 'DELETE', path: `${path}?cancel=true`, of: 'other' })).status).toBe(404);
      expect((await runs().get(workflowRunId))?.state).not.toBe('RUN_CANCELED');
      expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    });

    it('when a run is ended with a cancel that is not true or false, or asked with another method, then 400 naming cancel and 405, and the run is unchanged', async () => {
      const { workflowRunId } = await client().trigger({
        url: workflow.endpoints.expressUrl('sleepy'),
        body: {},
      });
      await waitFor('the run started', async () => (await runs().get(workflowRunId)) ?? undefined, {
        timeoutMs: 5_000,
      });
      const path = `/v2/workflows/runs/${workflowRunId}`;
      const bad = await ask({ method: 'DELETE', path: `${path}?cancel=maybe` });
      expect(bad.status).toBe(400);
      expect(await errorOf(bad)).toBe('query parameter cancel "maybe" is not true or false');
      const wrong = await ask({ method: 'POST', path });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('GET, DELETE');
      expect((await ask({ method: 'GET', path: '/v2/workflows/runs/wfr_unknown' })).status).toBe(404);
      expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    });

    it('when a workflow message names a malformed run id, no URL, or a step of a run that does not exist, then 400 naming it and nothing is stored', async () => {
      const url = workflow.endpoints.expressUrl('sequential');
      const publish = (headers: Record<string, string>) =>
        ask({
          method: 'POST',
          path: `/v2/publish/${url}`,
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        });
      const before = await suite.inspect.zcard(queueKeys(suite.config.keyPrefix).workflowRunOrder);
      const malformed = await publish({
        'upstash-workflow-runid': 'run 1',
        'upstash-workflow-url': url,
        'upstash-workflow-init': 'true',
      });
      expect(malformed.status).toBe(400);
      expect(await errorOf(malformed)).toContain('Upstash-Workflow-RunId "run 1" is not a workflow run id');
      const noUrl = await publish({ 'upstash-workflow-runid': 'wfr_a', 'upstash-workflow-init': 'true' });
      expect(noUrl.status).toBe(400);
      expect(await errorOf(noUrl)).toBe('Upstash-Workflow-Url is required with Upstash-Workflow-RunId');
      const orphan = await publish({
        'upstash-workflow-runid': 'wfr_nowhere',
        'upstash-workflow-url': url,
        'upstash-workflow-init': 'false',
      });
      expect(orphan.status).toBe(400);
      expect(await errorOf(orphan)).toBe(
        'workflow run wfr_nowhere not found: a step needs a run started by a trigger',
      );
      expect(await suite.inspect.zcard(queueKeys(suite.config.keyPrefix).workflowRunOrder)).toBe(before);
      expect(await suite.inspect.exists(queueKeys(suite.config.keyPrefix).workflowSteps('wfr_nowhere'))).toBe(
        0,
      );
    });
  });

  it("when a step's result is larger than a delivery carries, then the next delivery's steps are fetched and the run still sees it", async () => {
    const { workflowRunId } = await client().trigger({ url: workflow.endpoints.plainUrl('big'), body: {} });
    expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    expect(seen.get(workflowRunId)).toEqual({ length: 80_000 });
  });

  // The suite's teardown relies on it: a handler still running once the replicas stop retries its
  // publish into a closed port and the SDK logs after the suite is done (jest exits 1).
  it('when the endpoints close while a step runs on each server, then close answers new requests 503 and resolves only once both steps answered, their results stored', async () => {
    let started = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const endpoints = await startWorkflowEndpoints({
      target: suite.target,
      queueUrl: suite.replicas[1]!.queueUrl(suite.target),
      workflows: {
        held: {
          route: async (context) => {
            await context.run('held', async () => {
              started += 1;
              await released;
              return 'released';
            });
          },
        },
      },
    });
    const runIds: string[] = [];
    for (const url of [endpoints.expressUrl('held'), endpoints.plainUrl('held')])
      runIds.push((await client().trigger({ url, body: {} })).workflowRunId);
    await waitFor('both steps running', async () => started === 2 || undefined, {
      timeoutMs: 15_000,
      intervalMs: 20,
    });

    const closed = endpoints.close();
    for (const url of [endpoints.expressUrl('held'), endpoints.plainUrl('held')])
      expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(503);
    release();
    await closed;
    for (const runId of runIds)
      expect(await recordedSteps(runs(), runId)).toEqual([
        expect.objectContaining({ stepName: 'held', out: '"released"' }),
      ]);
  });
});
