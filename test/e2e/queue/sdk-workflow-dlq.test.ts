import { Client } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';

interface Plan {
  key: string;
}

/**
 * The workflow DLQ through the unchanged @upstash/workflow 1.3.3 Client: client.dlq.list with its
 * filters and cursor, resume, restart, retryFailureFunction and delete, by ids, by filter and
 * all, with QStash's statuses and answers; a bulk request that names nothing or cannot be read is
 * a 400 and changes nothing, and another binding sees none of it. Runs fail on replica-b (the
 * endpoints' client); the DLQ is managed through replica-a.
 */
describe('the workflow DLQ with the @upstash/workflow SDK', () => {
  /** Keys whose 'maybe' step throws; keys whose failure function throws; how often steps ran. */
  const broken = new Set<string>();
  const brokenCallback = new Set<string>();
  const ran = new Map<string, number>();
  const failures = new Map<string, number>();
  /** The run id each key's 'maybe' step last ran in, as the SDK's context saw it. */
  const ranIn = new Map<string, string>();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const workflow = useWorkflowSuite(() => ({
    workflows: {
      flaky: {
        route: async (context) => {
          const { key } = context.requestPayload as Plan;
          await context.run('before', () => count(ran, `${key}/before`));
          await context.run('maybe', () => {
            if (broken.has(key)) throw new Error(`broken ${key}`);
            count(ran, `${key}/maybe`);
            ranIn.set(key, context.workflowRunId);
          });
        },
        options: {
          failureFunction: async ({ context }) => {
            const { key } = context.requestPayload as Plan;
            count(failures, key);
            if (brokenCallback.has(key)) throw new Error(`failure function broken for ${key}`);
          },
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, runs } = workflow;
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, async () => ((await check()) ? true : undefined), { timeoutMs: 60_000, intervalMs: 25 });
  const stateIs = (runId: string, state: string) =>
    until(`run ${runId} ${state}`, async () => (await runs().get(runId))?.state === state);

  /** A run of `key` that fails at 'maybe' (retries 0); its DLQ id once its failure function ran. */
  const failedRun = async (key: string, label: string) => {
    broken.add(key);
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('flaky'),
      body: { key },
      retries: 0,
      label,
    });
    await stateIs(workflowRunId, 'RUN_FAILED');
    const expected = brokenCallback.has(key) ? 'CALLBACK_FAIL' : 'CALLBACK_SUCCESS';
    await until(`${key}'s failure callback ${expected}`, async () => {
      return (await runs().get(workflowRunId))?.callback?.state === expected;
    });
    const { dlqId } = JSON.parse((await runs().get(workflowRunId))!.failure!) as { dlqId: string };
    return { runId: workflowRunId, dlqId };
  };
  const ask = async (
    path: string,
    method: string,
    token = suite.target.token,
    headers: Record<string, string> = {},
    target = suite.target,
  ) => {
    const response = await fetch(`${suite.replicas[0]!.queueUrl(target)}${path}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${token}` },
    });
    return [response.status, await response.json().catch(() => undefined)] as const;
  };

  it('when runs fail, then dlq.list shows each with its run, URL, label and failure callback state, by filter and page; another binding sees none', async () => {
    brokenCallback.add('list-b');
    const a = await failedRun('list-a', 'listed');
    const b = await failedRun('list-b', 'listed');
    const { messages } = await client().dlq.list({ filter: { label: 'listed' } });
    expect(messages.map((m) => m.dlqId)).toEqual([b.dlqId, a.dlqId]);
    expect(messages[1]).toMatchObject({
      dlqId: a.dlqId,
      workflowRunId: a.runId,
      workflowUrl: workflow.endpoints.expressUrl('flaky'),
      label: 'listed',
      responseStatus: 500,
      failureCallbackInfo: { state: 'CALLBACK_SUCCESS' },
      maxRetries: 0,
    });
    expect(messages[1]!.workflowCreatedAt).toBe((await runs().get(a.runId))!.createdAt);
    expect(messages[0]!.failureCallbackInfo).toEqual({ state: 'CALLBACK_FAIL' });

    const first = await client().dlq.list({ count: 1, filter: { label: 'listed' } });
    expect(first.messages.map((m) => m.dlqId)).toEqual([b.dlqId]);
    const second = await client().dlq.list({ count: 1, cursor: first.cursor!, filter: { label: 'listed' } });
    expect(second.messages.map((m) => m.dlqId)).toEqual([a.dlqId]);
    const byRun = await client().dlq.list({ filter: { workflowRunId: a.runId } });
    expect(byRun.messages.map((m) => m.dlqId)).toEqual([a.dlqId]);
    const failedCallbacks = await client().dlq.list({
      filter: { failureFunctionState: 'CALLBACK_FAIL', label: 'listed' },
    });
    expect(failedCallbacks.messages.map((m) => m.dlqId)).toEqual([b.dlqId]);
    const byUrl = await client().dlq.list({ filter: { workflowUrl: workflow.endpoints.plainUrl('flaky') } });
    expect(byUrl.messages).toEqual([]);

    const other = new Client({
      baseUrl: suite.replicas[0]!.queueUrl(suite.otherTarget),
      token: suite.otherTarget.token,
    });
    expect((await other.dlq.list()).messages).toEqual([]);
    await expect(other.dlq.restart(a.dlqId)).rejects.toMatchObject({ status: 404 });
    expect((await ask('/v2/dlq?source=workflow', 'GET', suite.otherTarget.token))[0]).toBe(401);
    expect((await runs().get(a.runId))?.state).toBe('RUN_FAILED');
  }, 240_000);

  it('when failed runs are resumed, then each resumes as a new run (a new id) from its failed step, its steps so far kept; when restarted, a new run starts from the beginning; bad ids change nothing', async () => {
    const resumed = await failedRun('resume', 'acted');
    const restarted = await failedRun('restart', 'acted');
    expect(await ask(`/v2/workflows/dlq/resume?dlqIds=${resumed.dlqId}&dlqIds=nope`, 'POST')).toEqual([
      404,
      { error: 'workflow dead letter nope not found' },
    ]);
    expect((await ask(`/v2/workflows/dlq/resume?dlqIds=${resumed.dlqId}`, 'GET'))[0]).toBe(405);
    expect((await runs().get(resumed.runId))?.state).toBe('RUN_FAILED');

    broken.delete('resume');
    broken.delete('restart');
    const [again] = (await client().dlq.resume([resumed.dlqId], { retries: 1 })).workflowRuns;
    // As Upstash documents: a new run id, the steps so far kept.
    expect(again).toEqual({
      workflowRunId: expect.stringMatching(/^wfr_/),
      workflowCreatedAt: expect.any(Number),
    });
    expect(again!.workflowRunId).not.toBe(resumed.runId);
    await stateIs(again!.workflowRunId, 'RUN_SUCCESS');
    expect([ran.get('resume/before'), ran.get('resume/maybe')]).toEqual([1, 1]);
    expect(ranIn.get('resume')).toBe(again!.workflowRunId);
    expect((await runs().get(resumed.runId))?.state).toBe('RUN_FAILED');
    const [log] = (await client().logs({ workflowRunId: again!.workflowRunId })).runs;
    expect(log).toMatchObject({
      workflowState: 'RUN_SUCCESS',
      workflowRunCreatedAt: again!.workflowCreatedAt,
    });
    const stepNames = log!.steps.flatMap((group) => group.steps.map((step) => step.stepName));
    expect(stepNames).toEqual(expect.arrayContaining(['before', 'maybe']));
    // The request's Upstash-Retries is the new run's, for its remaining steps.
    expect((await runs().get(again!.workflowRunId))?.config.retries).toBe(1);
    // The entry left the DLQ: a second resume of it is a 404.
    await expect(client().dlq.resume([resumed.dlqId])).rejects.toMatchObject({ status: 404 });

    const result = await client().dlq.restart(restarted.dlqId, {
      retries: 2,
      flowControl: { key: 'restarted', parallelism: 3 },
    });
    const [fresh] = result.workflowRuns;
    expect(fresh!.workflowRunId).not.toBe(restarted.runId);
    await stateIs(fresh!.workflowRunId, 'RUN_SUCCESS');
    // From the beginning: 'before' ran once in the failed run and once in the new one.
    expect([ran.get('restart/before'), ran.get('restart/maybe')]).toEqual([2, 1]);
    // The failed run's settings, the restart's overrides replacing them.
    const { config } = (await runs().get(fresh!.workflowRunId))!;
    expect(config).toMatchObject({
      label: 'acted',
      retries: 2,
      flowControl: { key: 'restarted', parallelism: 3 },
    });
    expect((await runs().get(restarted.runId))?.state).toBe('RUN_FAILED');
    // Each entry left the DLQ; a second action on it is a 404.
    expect((await client().dlq.list({ filter: { label: 'acted' } })).messages).toEqual([]);
    await expect(client().dlq.restart(restarted.dlqId)).rejects.toMatchObject({ status: 404 });
  }, 240_000);

  it('when a failure function failed, then retryFailureFunction sends it again until it succeeds; a run whose callback did not fail is a 400', async () => {
    brokenCallback.add('callback');
    const failed = await failedRun('callback', 'callback');
    expect(failures.get('callback')).toBe(1);
    brokenCallback.delete('callback');
    expect(await client().dlq.retryFailureFunction({ dlqId: failed.dlqId })).toEqual({
      workflowRunId: failed.runId,
      workflowCreatedAt: (await runs().get(failed.runId))!.createdAt,
    });
    await until(
      'the failure callback succeeded',
      async () => (await runs().get(failed.runId))?.callback?.state === 'CALLBACK_SUCCESS',
    );
    expect(failures.get('callback')).toBe(2);
    await expect(client().dlq.retryFailureFunction({ dlqId: failed.dlqId })).rejects.toMatchObject({
      status: 400,
    });
    expect(await ask('/v2/workflows/dlq/callback/0000000000000-00000000', 'POST')).toEqual([
      404,
      { error: 'workflow dead letter 0000000000000-00000000 not found' },
    ]);
    // Upstash's cancel of a callback sent again (REST docs only): none in progress is a 400.
    const callbackPath = `/v2/workflows/dlq/callback/${failed.dlqId}`;
    expect(await ask(callbackPath, 'DELETE')).toEqual([
      400,
      {
        error: `workflow run ${failed.runId} has no failure callback in progress that was sent again (CALLBACK_SUCCESS)`,
      },
    ]);
    expect((await ask(callbackPath, 'DELETE', suite.otherTarget.token))[0]).toBe(401);
    expect((await ask('/v2/workflows/dlq/callback/0000000000000-00000000', 'DELETE'))[0]).toBe(404);
    expect((await ask(callbackPath, 'PUT'))[0]).toBe(405);
    expect((await runs().get(failed.runId))?.callback?.state).toBe('CALLBACK_SUCCESS');
  }, 240_000);

  it('when entries are resumed and deleted by filter and all, then exactly those named go; a request that names nothing or cannot be read is a 400 and changes nothing', async () => {
    const kept = await failedRun('bulk-kept', 'bulk-kept');
    const [one, two] = [await failedRun('bulk-1', 'bulk'), await failedRun('bulk-2', 'bulk')];
    const cases: [string, string, string][] = [
      [
        'DELETE',
        '/v2/workflows/dlq',
        'the request names no workflow dead letters: give dlqIds, filters, or count to take every entry a page at a time',
      ],
      [
        'POST',
        '/v2/workflows/dlq/resume?cursor=0000000000000-00000000',
        'the request names no workflow dead letters: give dlqIds, filters, or count to take every entry a page at a time',
      ],
      [
        'POST',
        `/v2/workflows/dlq/restart?${Array.from({ length: 51 }, () => 'dlqIds=x').join('&')}`,
        'dlqIds names 51 entries: at most 50 a request',
      ],
      ['DELETE', '/v2/workflows/dlq?dlqId=x', 'unknown query parameter "dlqId": it is dlqIds'],
      ['DELETE', '/v2/workflows/dlq?labl=bulk', 'unknown query parameter "labl"'],
      [
        'POST',
        `/v2/workflows/dlq/restart?dlqIds=${one.dlqId}&label=bulk`,
        'dlqIds cannot be combined with filters or a cursor',
      ],
      [
        'POST',
        '/v2/workflows/dlq/resume?count=-1',
        'query parameter count must be a whole number from 1 to 1000',
      ],
      [
        'POST',
        '/v2/workflows/dlq/resume?failureFunctionState=DONE',
        'query parameter failureFunctionState must be one of CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL, CALLBACK_CANCELED',
      ],
      ['GET', '/v2/dlq?source=message', 'query parameter source "message" is not workflow'],
      [
        'DELETE',
        '/v2/workflows/dlq?cursor=abc',
        'query parameter cursor "abc" is not a cursor this API gave',
      ],
    ];
    for (const [method, path, error] of cases)
      expect([path, ...(await ask(path, method))]).toEqual([path, 400, { error }]);
    expect((await client().dlq.list({ filter: { label: ['bulk', 'bulk-kept'] } })).messages).toHaveLength(3);

    broken.delete('bulk-1');
    const resumed = await client().dlq.resume({ filter: { label: 'bulk', workflowRunId: one.runId } });
    expect(resumed).toEqual({
      workflowRuns: [
        { workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number) },
      ],
    });
    await stateIs(resumed.workflowRuns[0]!.workflowRunId, 'RUN_SUCCESS');
    expect(await client().dlq.delete({ filter: { label: 'bulk' } })).toEqual({ deleted: 1 });
    expect((await client().dlq.list({ filter: { workflowRunId: two.runId } })).messages).toEqual([]);
    expect((await client().dlq.list({ filter: { label: 'bulk-kept' } })).messages).toHaveLength(1);
    expect(await client().dlq.delete([kept.dlqId])).toEqual({ deleted: 1 });

    // All, a page at a time: the SDK sends count alone.
    const rest = [await failedRun('all-1', 'all'), await failedRun('all-2', 'all')];
    const page = await client().dlq.delete({ all: true, count: 1 });
    expect(page).toMatchObject({ deleted: 1, cursor: expect.any(String) });
    let deleted = page.deleted;
    for (let cursor = page.cursor; cursor;) {
      const next = await client().dlq.delete({ all: true, count: 1, cursor });
      deleted += next.deleted;
      cursor = next.cursor;
    }
    expect(deleted).toBeGreaterThanOrEqual(rest.length);
    expect((await client().dlq.list()).messages).toEqual([]);
  }, 240_000);

  it("when one entry is read, deleted, resumed or restarted by its dlqId in the path (Upstash's REST routes, which the SDK does not call), then exactly that entry is acted on; an unknown id or a plain message's entry is a 404, another binding's token a 401, a wrong method a 405, a bad or taken run id a 400, and those change nothing", async () => {
    const read = await failedRun('entry-read', 'entry');
    const resumed = await failedRun('entry-resume', 'entry');
    const restarted = await failedRun('entry-restart', 'entry');
    const entry = (dlqId: string) => `/v2/workflows/dlq/${dlqId}`;
    const [, listed] = await ask(`/v2/workflows/dlq?workflowRunId=${read.runId}`, 'GET');
    expect(await ask(entry(read.dlqId), 'GET')).toEqual([
      200,
      (listed as { messages: unknown[] }).messages[0],
    ]);

    // A plain message's dead letter (its destination answers 404) is no workflow entry.
    const [, published] = await ask(
      `/v2/publish/${workflow.endpoints.plainUrl('missing')}`,
      'POST',
      suite.target.token,
      { 'upstash-retries': '0' },
    );
    const { messageId } = published as { messageId: string };
    const plainDlqId = await waitFor(
      'the plain dead letter',
      async () => {
        const [, body] = await ask('/v2/dlq', 'GET');
        return (body as { messages: { messageId: string; dlqId: string }[] }).messages.find(
          (m) => m.messageId === messageId,
        )?.dlqId;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );

    const unknown = '0000000000000-00000000';
    const other = suite.otherTarget.token;
    const refusals: [string, string, number, string?, Record<string, string>?][] = [
      ['GET', entry(unknown), 404],
      ['DELETE', entry(plainDlqId), 404],
      ['POST', `/v2/workflows/dlq/resume/${plainDlqId}`, 404],
      ['POST', `/v2/workflows/dlq/restart/${unknown}`, 404],
      ['GET', entry(read.dlqId), 401, other],
      ['DELETE', entry(read.dlqId), 401, other],
      ['POST', `/v2/workflows/dlq/resume/${resumed.dlqId}`, 401, other],
      ['POST', `/v2/workflows/dlq/restart/${restarted.dlqId}`, 401, ''],
      ['PUT', entry(read.dlqId), 405],
      ['GET', `/v2/workflows/dlq/resume/${resumed.dlqId}`, 405],
      ['POST', `/v2/workflows/dlq/restart/${restarted.dlqId}?count=1`, 400],
      [
        'POST',
        `/v2/workflows/dlq/resume/${resumed.dlqId}`,
        400,
        undefined,
        { 'upstash-workflow-runid': 'run-1' },
      ],
      [
        'POST',
        `/v2/workflows/dlq/restart/${restarted.dlqId}`,
        400,
        undefined,
        { 'upstash-workflow-runid': read.runId },
      ],
      ['POST', `/v2/workflows/dlq/resume/${resumed.dlqId}`, 400, undefined, { 'upstash-retries': 'many' }],
    ];
    for (const [method, path, status, token, headers] of refusals)
      expect([method, path, (await ask(path, method, token ?? suite.target.token, headers))[0]]).toEqual([
        method,
        path,
        status,
      ]);
    expect(await ask(entry(unknown), 'GET')).toEqual([
      404,
      { error: `workflow dead letter ${unknown} not found` },
    ]);
    expect(
      await ask(`/v2/workflows/dlq/resume/${resumed.dlqId}`, 'POST', suite.target.token, {
        'upstash-workflow-runid': read.runId,
      }),
    ).toEqual([400, { error: `Upstash-Workflow-RunId: workflow run ${read.runId} exists` }]);
    // Another binding's own token and URL: its database has no such entry.
    expect((await ask(entry(read.dlqId), 'GET', other, {}, suite.otherTarget))[0]).toBe(404);
    // Nothing changed: every entry is still listed, every run still failed.
    expect((await client().dlq.list({ filter: { label: 'entry' } })).messages).toHaveLength(3);
    for (const { runId } of [read, resumed, restarted])
      expect((await runs().get(runId))?.state).toBe('RUN_FAILED');

    broken.delete('entry-resume');
    broken.delete('entry-restart');
    const asResumed = await ask(`/v2/workflows/dlq/resume/${resumed.dlqId}`, 'POST', suite.target.token, {
      'upstash-workflow-runid': 'wfr_entry-resumed',
      'upstash-retries': '2',
    });
    expect(asResumed).toEqual([
      200,
      { workflowRunId: 'wfr_entry-resumed', workflowCreatedAt: expect.any(Number) },
    ]);
    await stateIs('wfr_entry-resumed', 'RUN_SUCCESS');
    expect([ran.get('entry-resume/before'), ranIn.get('entry-resume')]).toEqual([1, 'wfr_entry-resumed']);
    expect((await runs().get('wfr_entry-resumed'))?.config.retries).toBe(2);

    const [status, asRestarted] = await ask(`/v2/workflows/dlq/restart/${restarted.dlqId}`, 'POST');
    expect(status).toBe(200);
    const { workflowRunId } = asRestarted as { workflowRunId: string };
    expect(workflowRunId).toMatch(/^wfr_/);
    expect(workflowRunId).not.toBe(restarted.runId);
    await stateIs(workflowRunId, 'RUN_SUCCESS');
    expect(ran.get('entry-restart/before')).toBe(2);

    expect(await ask(entry(read.dlqId), 'DELETE')).toEqual([200, { deleted: 1 }]);
    for (const { dlqId } of [read, resumed, restarted]) expect((await ask(entry(dlqId), 'GET'))[0]).toBe(404);
    expect((await ask(entry(read.dlqId), 'DELETE'))[0]).toBe(404);
    expect((await runs().get(read.runId))?.state).toBe('RUN_FAILED');
  }, 240_000);
});
