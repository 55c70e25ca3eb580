import { Client } from '@upstash/workflow';
import { useWorkflowDlqSuite } from '../../helpers/queue/workflow-dlq-suite.js';

/**
 * The workflow DLQ through the unchanged @upstash/workflow 1.3.3 Client, one entry at a time:
 * client.dlq.list with its filters and cursor, resume, restart and retryFailureFunction, with
 * QStash's statuses and answers; bad ids change nothing, and another binding sees none of it. The
 * bulk and single-entry routes are sdk-workflow-dlq-routes.test.ts's.
 */
describe('the workflow DLQ with the @upstash/workflow SDK', () => {
  const workflow = useWorkflowDlqSuite();
  const suite = workflow.queue;
  const { client, runs, broken, brokenCallback, ran, failures, ranIn, until, stateIs, failedRun, ask } =
    workflow;

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
});
