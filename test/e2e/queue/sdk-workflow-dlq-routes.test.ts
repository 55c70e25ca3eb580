import { waitFor } from '../../../local/wait.js';
import { useWorkflowDlqSuite } from '../../helpers/queue/workflow-dlq-suite.js';

/**
 * The workflow DLQ's requests that name several entries or one by its path: resume and delete by
 * filter and all through the unchanged @upstash/workflow 1.3.3 Client, a bulk request that names
 * nothing or cannot be read a 400 that changes nothing, and Upstash's single-entry REST routes
 * (read, delete, resume, restart by dlqId) with their refusals. The SDK's one-entry actions are
 * sdk-workflow-dlq.test.ts's.
 */
describe("the workflow DLQ's bulk and single-entry routes", () => {
  const workflow = useWorkflowDlqSuite();
  const suite = workflow.queue;
  const { client, runs, broken, ran, ranIn, stateIs, failedRun, ask } = workflow;

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
