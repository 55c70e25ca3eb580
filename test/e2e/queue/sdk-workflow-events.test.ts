import type { WorkflowContext } from '@upstash/workflow';
import { createWorkflow } from '@upstash/workflow/express';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { RUN_WAIT_FIELD_PREFIX } from '../../../gateway/queue/core/workflow-event.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';

interface WaitPlan {
  eventId: string;
  timeout?: `${bigint}s`;
  /** Seconds the run sleeps before it waits (a notify can come first). */
  pause?: number;
}

interface InvokePlan {
  n: number;
  end?: 'fail' | 'cancel';
}

/**
 * Workflow events through the unchanged @upstash/workflow 1.3.3: context.waitForEvent
 * (`POST /v2/wait/{eventId}`), client.notify with and without a run id, client.getWaiters, and the
 * wait's timeout; and context.invoke between workflows of one serveMany, where the invoking run
 * waits for the other's result. The SDK client talks to replica-a, the endpoints to replica-b.
 */
describe('workflow events and invoke with the @upstash/workflow SDK', () => {
  const outcomes = new Map<string, { eventData: unknown; timeout: boolean }>();
  const invoked = new Map<string, { body: unknown; isFailed?: boolean; isCanceled?: boolean }>();
  const childPayloads: unknown[] = [];

  const child = createWorkflow(async (context: WorkflowContext<InvokePlan>) => {
    const { n, end } = context.requestPayload;
    const doubled = await context.run('double', () => {
      childPayloads.push(context.requestPayload);
      return n * 2;
    });
    if (end === 'cancel') await context.cancel();
    if (end === 'fail')
      await context.run('boom', () => {
        throw new Error(`child failed on ${n}`);
      });
    return `doubled ${doubled}`;
  });
  const parent = createWorkflow(async (context: WorkflowContext<InvokePlan>) => {
    const result = await context.invoke('invoke child', {
      workflow: child,
      body: context.requestPayload,
      retries: 0,
    });
    await context.run('record', () => invoked.set(context.workflowRunId, result));
  });

  const workflow = useWorkflowSuite(() => ({
    workflows: {
      waiter: {
        route: async (context) => {
          const plan = context.requestPayload as WaitPlan;
          if (plan.pause !== undefined) await context.sleep('pause', plan.pause);
          const { eventData, timeout } = await context.waitForEvent('wait', plan.eventId, {
            timeout: plan.timeout ?? '30s',
          });
          await context.run('record', () => outcomes.set(context.workflowRunId, { eventData, timeout }));
        },
      },
    },
    many: { parent, child },
  }));
  const suite = workflow.queue;
  const { client, runs } = workflow;
  const outcomeOf = (runId: string) =>
    waitFor(`run ${runId} resumed`, async () => outcomes.get(runId), { timeoutMs: 15_000, intervalMs: 25 });
  const waitersOf = (eventId: string, count: number) =>
    waitFor(
      `${count} waiters of ${eventId}`,
      async () => {
        const waiters = await client().getWaiters({ eventId });
        return waiters.length === count ? waiters : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  /** The run's pointers to its waiters (keys.ts workflowRun): each goes when its waiter is taken. */
  const waitPointersOf = async (runId: string) =>
    Object.keys(await suite.inspect.hgetall(queueKeys(suite.config.keyPrefix).workflowRun(runId))).filter(
      (field) => field.startsWith(RUN_WAIT_FIELD_PREFIX),
    );
  const lastStepGroupOf = async (runId: string): Promise<unknown> =>
    (await client().logs({ workflowRunId: runId })).runs[0]?.steps.at(-1);
  const start = async (plan: WaitPlan, plain = false) =>
    (
      await client().trigger({
        url: plain ? workflow.endpoints.plainUrl('waiter') : workflow.endpoints.expressUrl('waiter'),
        body: plan,
      })
    ).workflowRunId;

  it("when two runs wait for an event and it is notified, then getWaiters lists both, logs show each run's wait in progress, notify answers both and each run gets the data", async () => {
    const eventId = 'evt_order-paid';
    const started = Date.now();
    const runIds = [await start({ eventId }), await start({ eventId }, true)];
    const waiters = await waitersOf(eventId, 2);
    expect(waiters.map((w) => w.url).sort()).toEqual(
      [workflow.endpoints.expressUrl('waiter'), workflow.endpoints.plainUrl('waiter')].sort(),
    );
    for (const waiter of waiters) {
      expect(waiter.deadline).toBeGreaterThanOrEqual(Math.floor((started + 30_000) / 1000));
      expect(waiter.deadline).toBeLessThanOrEqual(Math.ceil((Date.now() + 30_000) / 1000));
    }
    // client.logs: a waiting run ends with QStash's `next` group, its wait in progress.
    for (const runId of runIds) {
      const waiter = waiters.find((w) => w.headers['Upstash-Workflow-Runid']?.[0] === runId);
      expect(await lastStepGroupOf(runId)).toEqual({
        type: 'next',
        steps: [
          expect.objectContaining({
            stepName: 'wait',
            stepType: 'Wait',
            state: 'STEP_PROGRESS',
            waitEventId: eventId,
            waitTimeoutDuration: '30s',
          }),
        ],
      });
      const [wait] = ((await lastStepGroupOf(runId)) as { steps: { waitTimeoutDeadline: number }[] }).steps;
      expect(Math.floor(wait!.waitTimeoutDeadline / 1000)).toBe(waiter?.deadline);
    }

    const notified = (await client().notify({ eventId, eventData: { paid: 42 } })) as unknown as {
      messageId: string;
      workflowRunId: string;
    }[];
    expect(notified.map((n) => n.workflowRunId).sort()).toEqual([...runIds].sort());
    expect(notified.every((n) => n.messageId.startsWith('msg_'))).toBe(true);
    for (const runId of runIds) {
      expect(await outcomeOf(runId)).toEqual({ eventData: { paid: 42 }, timeout: false });
      expect(await lastStepGroupOf(runId)).toMatchObject({ type: 'sequential' });
      expect(await waitPointersOf(runId)).toEqual([]);
    }
    expect(await client().getWaiters({ eventId })).toEqual([]);
    // Nobody waits any more: a second notify resumes no one.
    expect(await client().notify({ eventId, eventData: 'late' })).toEqual([]);
  });

  it('when nobody notifies within the timeout, then the run resumes timed out, once', async () => {
    const runId = await start({ eventId: 'evt_never', timeout: '1s' });
    expect(await outcomeOf(runId)).toEqual({ eventData: undefined, timeout: true });
    await waitFor(
      'the run finished',
      async () => (await runs().get(runId))?.state === 'RUN_SUCCESS' || undefined,
      {
        timeoutMs: 5_000,
      },
    );
    expect(await client().getWaiters({ eventId: 'evt_never' })).toEqual([]);
    expect(await waitPointersOf(runId)).toEqual([]);
  });

  it('when a run waits, then its timer is not a message: not found by id, not cancelled by id or by filter, and the run still times out', async () => {
    const eventId = 'evt_timer';
    const runId = await start({ eventId, timeout: '6s' }, true);
    await waitersOf(eventId, 1);
    const [field] = Object.keys(
      await suite.inspect.hgetall(queueKeys(suite.config.keyPrefix).workflowWaiters(eventId)),
    );
    const timerId = field!.slice(`${runId}/`.length);
    const base = `${suite.replicas[0]!.queueUrl(suite.target)}/v2/messages`;
    const ask = async (path: string, method: string) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${suite.target.token}` },
      });
      return [response.status, await response.json()];
    };
    expect(await ask(`/${timerId}`, 'GET')).toEqual([404, { error: `message ${timerId} not found` }]);
    expect(await ask(`/${timerId}`, 'DELETE')).toEqual([404, { error: `message ${timerId} not found` }]);
    expect(await ask(`?messageIds=${timerId}`, 'DELETE')).toEqual([200, { cancelled: 0 }]);
    const url = encodeURIComponent(workflow.endpoints.plainUrl('waiter'));
    expect(await ask(`?url=${url}`, 'DELETE')).toEqual([200, { cancelled: 0 }]);
    expect(await outcomeOf(runId)).toEqual({ eventData: undefined, timeout: true });
    // QStash logs no message for a wait: its timer's creation and end are not events either.
    const log = await fetch(`${suite.replicas[0]!.queueUrl(suite.target)}/v2/events?messageId=${timerId}`, {
      headers: { authorization: `Bearer ${suite.target.token}` },
    });
    expect(await log.json()).toEqual({ events: [] });
  });

  it('when an event is notified before the run waits, then a notify of that run is kept for its wait and a notify of all is not', async () => {
    const eventId = 'evt_early';
    const runId = await start({ eventId, pause: 1, timeout: '20s' });
    expect(await client().notify({ eventId, eventData: 'to everyone' })).toEqual([]);
    const kept = await client().notify({ eventId, eventData: 'to this run', workflowRunId: runId });
    expect(kept).toMatchObject({ workflowRunId: runId });
    expect(await outcomeOf(runId)).toEqual({ eventData: 'to this run', timeout: false });
  });

  it('when an event route is called wrongly, then 405, 401, 404 or 400 naming the field, and nothing is stored', async () => {
    const runId = await start({ eventId: 'evt_guarded' });
    await waitersOf('evt_guarded', 1);
    const base = suite.replicas[1]!.queueUrl(suite.target);
    const ask = (path: string, init: RequestInit & { token?: string; url?: string } = {}) =>
      fetch(`${init.url ?? base}${path}`, {
        method: init.method ?? 'POST',
        headers: {
          authorization: `Bearer ${init.token ?? suite.target.token}`,
          ...(init.headers as Record<string, string>),
        },
        ...(init.body === undefined ? {} : { body: init.body }),
      });
    const answer = async (response: Response) => [response.status, await response.json()];

    expect((await ask('/v2/wait/evt_guarded', { method: 'GET' })).status).toBe(405);
    expect((await ask('/v2/waiters/evt_guarded')).status).toBe(405);
    expect((await ask('/v2/notify/evt_guarded', { method: 'DELETE' })).status).toBe(405);
    expect((await ask('/v2/waiters/evt_guarded', { method: 'GET', token: 'wrong' })).status).toBe(401);
    expect((await ask('/v2/notify/evt_guarded', { token: suite.otherTarget.token })).status).toBe(401);

    // The other binding, with its own token: this binding's run and waiters are unknown there.
    const other = { url: suite.replicas[1]!.queueUrl(suite.otherTarget), token: suite.otherTarget.token };
    expect(await answer(await ask(`/v2/notify/${runId}/evt_guarded`, { ...other, body: 'x' }))).toEqual([
      404,
      { error: `workflow run ${runId} not found` },
    ]);
    expect(await answer(await ask('/v2/waiters/evt_guarded', { ...other, method: 'GET' }))).toEqual([
      200,
      [],
    ]);
    expect(await answer(await ask('/v2/notify/evt_guarded', { ...other, body: 'x' }))).toEqual([200, []]);

    const waitHeaders = { 'upstash-workflow-runid': runId, 'content-type': 'application/json' };
    const waitStep = { stepId: 2, stepName: 'w', stepType: 'Wait', concurrent: 1 };
    const bad: [string, RequestInit, string][] = [
      ['/v2/wait/evt_bad', { headers: waitHeaders, body: '{' }, 'the wait request body is not JSON'],
      [
        '/v2/wait/evt_bad',
        { headers: waitHeaders, body: JSON.stringify({ url: 'http://x', timeout: 'soon', step: waitStep }) },
        'timeout "soon" is not a duration such as 30s, 5m or 7d',
      ],
      [
        // Longer than the binding's maxDelay (spec.limits), the limit a wait's timeout takes.
        '/v2/wait/evt_bad',
        {
          headers: waitHeaders,
          body: JSON.stringify({ url: 'http://x', timeout: '10000d', step: waitStep }),
        },
        `timeout "10000d" is longer than ${suite.target.limits.maxDelayMs} ms`,
      ],
      [
        '/v2/wait/evt_bad',
        {
          headers: waitHeaders,
          body: JSON.stringify({ url: 'http://x', timeout: '1s', step: { ...waitStep, stepId: 0 } }),
        },
        'step.stepId must be an integer of at least 1',
      ],
      [
        '/v2/wait/evt_bad',
        { body: JSON.stringify({ url: 'http://x', timeout: '1s', step: waitStep }) },
        'Upstash-Workflow-RunId is required: the run that waits',
      ],
      [
        '/v2/wait/evt%20bad',
        { headers: waitHeaders, body: '{}' },
        `eventId "evt bad" must be 1 to 256 letters, digits, '_', '.', ':', '@' or '-'`,
      ],
    ];
    for (const [path, init, error] of bad)
      expect([path, ...(await answer(await ask(path, init)))]).toEqual([path, 400, { error }]);
    expect(await answer(await ask('/v2/notify/wfr_unknown/evt_guarded', { body: 'x' }))).toEqual([
      404,
      { error: 'workflow run wfr_unknown not found' },
    ]);
    // An invoke trigger (as context.invoke publishes it) with a bad body, or naming a run of
    // another binding as its invoker: refused, and no run starts.
    const invokeHeaders = {
      'upstash-workflow-init': 'true',
      'upstash-workflow-invoke': 'true',
      'upstash-workflow-runid': 'wfr_invoked-bad',
      'upstash-workflow-url': workflow.endpoints.expressUrl('many/child'),
    };
    const invokeStep = { stepId: 1, stepName: 'i', stepType: 'Invoke', concurrent: 1 };
    const publishInvoke = (body: string) =>
      ask(`/v2/publish/${workflow.endpoints.expressUrl('many/child')}`, { headers: invokeHeaders, body });
    expect(await answer(await publishInvoke('{'))).toEqual([
      400,
      { error: 'an invoke (Upstash-Workflow-Invoke: true) body must be JSON' },
    ]);
    expect(
      await answer(
        await publishInvoke(
          JSON.stringify({ workflowRunId: 'wfr_elsewhere', workflowUrl: 'http://x', step: invokeStep }),
        ),
      ),
    ).toEqual([404, { error: 'workflow run wfr_elsewhere not found' }]);
    expect(await runs().get('wfr_invoked-bad')).toBeUndefined();

    const keys = queueKeys(suite.config.keyPrefix);
    expect(
      await suite.inspect.exists(keys.workflowWaiters('evt_bad'), keys.workflowNotices('wfr_unknown')),
    ).toBe(0);
    // The waiting run is untouched by all of it.
    expect((await client().getWaiters({ eventId: 'evt_guarded' })).length).toBe(1);
    await client().notify({ eventId: 'evt_guarded', eventData: 'done' });
    expect(await outcomeOf(runId)).toEqual({ eventData: 'done', timeout: false });
  });

  it('when a run invokes another that succeeds, fails or is cancelled, then it resumes with the body, isFailed and isCanceled', async () => {
    const run = async (plan: InvokePlan) => {
      const { workflowRunId } = await client().trigger({
        url: workflow.endpoints.expressUrl('many/parent'),
        body: plan,
      });
      return waitFor(`invoke of ${workflowRunId}`, async () => invoked.get(workflowRunId), {
        timeoutMs: 15_000,
        intervalMs: 25,
      });
    };
    expect(await run({ n: 4 })).toEqual({ body: 'doubled 8', isFailed: false, isCanceled: false });
    expect(childPayloads).toContainEqual({ n: 4 });
    expect(await run({ n: 5, end: 'cancel' })).toMatchObject({ isFailed: false, isCanceled: true });
    const failed = await run({ n: 6, end: 'fail' });
    expect(failed).toMatchObject({ isFailed: true, isCanceled: false });
    expect(JSON.stringify(failed.body)).toMatch(/child failed on 6/);
  });
});
