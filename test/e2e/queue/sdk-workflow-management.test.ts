import type { Client } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { PendingMessages } from '../../../gateway/queue/stores/pending-messages.js';
import type { RouteFunction } from '../../helpers/queue/workflow-endpoints.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';

/**
 * Managing workflow runs through the unchanged @upstash/workflow 1.3.3 Client: client.cancel by
 * ids, URL, URL prefix, label and all (a cancelled run never runs another step), and
 * client.logs with its states, steps, cursor, count and filters. Runs are triggered through
 * replica-a and managed through replica-b.
 */
describe('workflow run management with the @upstash/workflow SDK', () => {
  const afterNap = new Set<string>();
  const sleeper: { route: RouteFunction } = {
    route: async (context) => {
      await context.run('before', () => 'awake');
      await context.sleep('nap', 30);
      await context.run('after', () => afterNap.add(context.workflowRunId));
    },
  };
  const workflow = useWorkflowSuite(() => ({
    workflows: {
      sleeper,
      other: sleeper,
      quick: {
        route: async (context) => {
          const doubled = await context.run('double', () => 2 * (context.requestPayload as { n: number }).n);
          return { doubled };
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, runs } = workflow;

  const pending = () => new PendingMessages(suite.inspect, queueKeys(suite.config.keyPrefix));
  /**
   * Triggers a run of `url` and waits until it sleeps: its sleep step is recorded and its message
   * stored, delayed (the step joins the run just before its message is stored).
   */
  const sleeping = async (url: string, label?: string): Promise<string> => {
    const { workflowRunId } = await client().trigger({ url, body: { at: url }, ...(label ? { label } : {}) });
    await waitFor(
      `run ${workflowRunId} asleep`,
      async () => {
        const nap = (await runs().steps(workflowRunId))[2];
        return nap && (await pending().find(nap.messageId)) ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    return workflowRunId;
  };
  const stateOf = async (runId: string) => (await runs().get(runId))?.state;

  it('when runs are cancelled by id and by ids, then each is RUN_CANCELED, its sleep is no longer pending, and it runs no other step', async () => {
    const [one, two, three] = await Promise.all(
      [1, 2, 3].map(() => sleeping(workflow.endpoints.expressUrl('sleeper'))),
    );
    const napOf = async (runId: string) => (await runs().steps(runId))[2]!.messageId;
    const naps = await Promise.all([one!, two!, three!].map(napOf));
    expect(await pending().find(naps[0]!)).toBeDefined();
    expect(await client(1).cancel(one!)).toEqual({ cancelled: 1 });
    expect(await client(1).cancel([two!, three!, one!])).toEqual({ cancelled: 2 });
    for (const [i, runId] of [one!, two!, three!].entries()) {
      expect(await stateOf(runId)).toBe('RUN_CANCELED');
      expect(await pending().find(naps[i]!)).toBeUndefined();
      expect(afterNap.has(runId)).toBe(false);
    }
  });

  it('when runs are cancelled by exact URL, URL prefix, label and all, then each cancel takes the running runs it names and only them', async () => {
    const plain = workflow.endpoints.plainUrl('sleeper');
    const express = workflow.endpoints.expressUrl('sleeper');
    const [a, b, c, d, e] = await Promise.all([
      sleeping(express, 'red'),
      sleeping(express),
      sleeping(workflow.endpoints.expressUrl('other')),
      sleeping(plain, 'blue'),
      sleeping(plain),
    ]);
    expect(await client(1).cancel({ filter: { label: 'red' } })).toEqual({ cancelled: 1 });
    expect(await stateOf(a!)).toBe('RUN_CANCELED');
    expect(await client(1).cancel({ filter: { workflowUrl: express } })).toEqual({ cancelled: 1 });
    expect(await stateOf(b!)).toBe('RUN_CANCELED');
    expect(await stateOf(c!)).toBe('RUN_STARTED');
    const plainBase = plain.slice(0, plain.lastIndexOf('/'));
    expect(await client(1).cancel({ filter: { workflowUrlStartingWith: plainBase } })).toEqual({
      cancelled: 2,
    });
    expect([await stateOf(d!), await stateOf(e!), await stateOf(c!)]).toEqual([
      'RUN_CANCELED',
      'RUN_CANCELED',
      'RUN_STARTED',
    ]);
    expect(await client(1).cancel({ all: true })).toEqual({ cancelled: 1 });
    expect(await stateOf(c!)).toBe('RUN_CANCELED');
  });

  it('when logs are read, then each run has its state, times, result and steps, newest first, paged by count and cursor and filtered by id, state and URL', async () => {
    const url = workflow.endpoints.plainUrl('quick');
    const first = (await client().trigger({ url, body: { n: 4 }, label: 'logged' })).workflowRunId;
    await waitFor('the run done', async () => ((await stateOf(first)) === 'RUN_SUCCESS' ? true : undefined), {
      timeoutMs: 10_000,
    });
    const second = (await client().trigger({ url, body: { n: 5 } })).workflowRunId;
    await waitFor(
      'the run done',
      async () => ((await stateOf(second)) === 'RUN_SUCCESS' ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const {
      runs: [log],
    } = await client(1).logs({ workflowRunId: first });
    expect(log).toMatchObject({
      workflowRunId: first,
      workflowUrl: url,
      workflowState: 'RUN_SUCCESS',
      workflowRunResponse: '{"doubled":8}',
      label: 'logged',
    });
    expect(log!.workflowRunCompletedAt).toBeGreaterThanOrEqual(log!.workflowRunCreatedAt);
    expect(
      log!.steps.map((group) =>
        (group.steps as { stepName: string; stepType: string; out: unknown }[]).map((s) => [
          s.stepName,
          s.stepType,
          s.out,
        ]),
      ),
    ).toEqual([[['init', 'Initial', { n: 4 }]], [['double', 'Run', 8]]]);
    const page = await client(1).logs({ count: 1, filter: { workflowUrl: url } } as Parameters<
      Client['logs']
    >[0]);
    expect(page.runs.map((r) => r.workflowRunId)).toEqual([second]);
    const next = await client(1).logs({
      count: 1,
      cursor: page.cursor,
      filter: { workflowUrl: url },
    } as Parameters<Client['logs']>[0]);
    expect(next.runs.map((r) => r.workflowRunId)).toEqual([first]);
    const canceled = await client(1).logs({ state: 'RUN_CANCELED', count: 100 } as Parameters<
      Client['logs']
    >[0]);
    expect(canceled.runs.length).toBeGreaterThan(0);
    expect(canceled.runs.every((r) => r.workflowState === 'RUN_CANCELED')).toBe(true);
  });

  it('when a cancel or logs call has an unknown parameter, a bad state, no filter value or names no run, then 400 naming it and no run changes', async () => {
    const runId = await sleeping(workflow.endpoints.expressUrl('sleeper'));
    const ask = (path: string, method = 'GET') =>
      fetch(`${suite.replicas[1]!.queueUrl(suite.target)}${path}`, {
        method,
        headers: { authorization: `Bearer ${suite.target.token}` },
      });
    const cases: [string, string, string][] = [
      [
        'DELETE',
        '/v2/workflows/runs?workflowRunIds=x&label=y',
        'workflowRunIds cannot be combined with filters',
      ],
      ['DELETE', '/v2/workflows/runs?labl=y', 'unknown query parameter "labl"'],
      [
        'DELETE',
        '/v2/workflows/runs',
        'the request names no workflow runs: give workflowRunIds, filters, or count to cancel every run',
      ],
      ['DELETE', '/v2/workflows/runs?count=0', 'query parameter count must be a whole number from 1 to 1000'],
      [
        'GET',
        '/v2/workflows/events?state=DONE',
        'query parameter state "DONE" is not one of RUN_STARTED, RUN_SUCCESS, RUN_FAILED, RUN_CANCELED',
      ],
      ['GET', '/v2/workflows/events?cursor=abc', 'cursor "abc" is not one this route answered'],
    ];
    for (const [method, path, error] of cases) {
      const response = await ask(path, method);
      expect([path, response.status, await response.json()]).toEqual([path, 400, { error }]);
    }
    expect(await stateOf(runId)).toBe('RUN_STARTED');
    const elsewhere = await fetch(
      `${suite.replicas[1]!.queueUrl(suite.otherTarget)}/v2/workflows/runs?workflowRunIds=${runId}`,
      {
        method: 'DELETE',
        headers: { authorization: `Bearer ${suite.otherTarget.token}` },
      },
    );
    expect(await elsewhere.json()).toEqual({ cancelled: 0 });
    expect(await stateOf(runId)).toBe('RUN_STARTED');
  });
});
