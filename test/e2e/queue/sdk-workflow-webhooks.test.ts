import http from 'node:http';
import { Client } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { buildQStashFormatToken } from '../../../api/qstash-token.js';
import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';
import { settledSnapshot, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';

interface Outcome {
  timeout: boolean;
  method?: string;
  url?: string;
  header?: string | null;
  body?: string;
}

/**
 * Webhooks through the unchanged @upstash/workflow 1.3.3: context.createWebhook builds its URL
 * from the endpoint's QStash client token (QStash's format: the binding's user id and its token)
 * as `{VQUEUE_URL}/v2/workflows/hooks/{userId}/{runId}/{eventId}`; an outside system calls it with
 * any method and no token, and context.waitForWebhook resumes with that request, or times out.
 */
describe('workflow webhooks with the @upstash/workflow SDK', () => {
  const urls = new Map<string, string>();
  const outcomes = new Map<string, Outcome>();
  const workflow = useWorkflowSuite(() => ({
    workflows: {
      hooked: {
        route: async (context) => {
          const { timeout } = context.requestPayload as { timeout: `${bigint}s` };
          const webhook = await context.createWebhook('create');
          await context.run('hand out', () => urls.set(context.workflowRunId, webhook.webhookUrl));
          const called = await context.waitForWebhook('wait', webhook, timeout);
          const outcome: Outcome = called.timeout
            ? { timeout: true }
            : {
                timeout: false,
                method: called.request!.method,
                url: called.request!.url,
                header: called.request!.headers.get('x-hook'),
                body: await called.request!.text(),
              };
          await context.run('record', () => outcomes.set(context.workflowRunId, outcome));
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client } = workflow;
  const started: string[] = [];

  const start = async (timeout = '30s') => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('hooked'),
      body: { timeout },
    });
    started.push(workflowRunId);
    const url = await waitFor(`${workflowRunId}'s webhook`, async () => urls.get(workflowRunId), {
      timeoutMs: 20_000,
    });
    return { runId: workflowRunId, url };
  };
  const outcomeOf = (runId: string) =>
    waitFor(`run ${runId} resumed`, async () => outcomes.get(runId), { timeoutMs: 20_000, intervalMs: 25 });
  /** Waits until the run waits for its webhook's event. */
  const waiting = (runId: string, url: string) =>
    waitFor(
      `run ${runId} waiting`,
      async () => {
        const eventId = url.slice(url.lastIndexOf('/') + 1);
        const waiters = await client().getWaiters({ eventId });
        return waiters.some((w) => w.headers['Upstash-Workflow-Runid']?.[0] === runId) || undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );

  it('when an outside system calls the webhook without a token, with POST or GET, then the run resumes with its method, URL, headers and body', async () => {
    const first = await start();
    const queueUrl = suite.replicas[1]!.queueUrl(suite.target);
    expect(first.url).toMatch(
      new RegExp(`^${queueUrl}/v2/workflows/hooks/tenant-a\\.cache/${first.runId}/evt_[A-Za-z0-9_-]+$`),
    );
    await waiting(first.runId, first.url);
    // Through the other replica than the one the URL names: any replica serves the binding.
    const called = await fetch(first.url.replace(queueUrl, suite.replicas[0]!.queueUrl(suite.target)), {
      method: 'POST',
      headers: { 'x-hook': 'from outside', 'content-type': 'text/plain' },
      body: 'paid: 42',
    });
    expect(called.status).toBe(200);
    expect(await called.json()).toMatchObject({ workflowRunId: first.runId, messageId: expect.any(String) });
    expect(await outcomeOf(first.runId)).toEqual({
      timeout: false,
      method: 'POST',
      url: expect.stringContaining(`/v2/workflows/hooks/tenant-a.cache/${first.runId}/`),
      header: 'from outside',
      body: 'paid: 42',
    });

    const second = await start();
    await waiting(second.runId, second.url);
    expect((await fetch(`${second.url}?status=done`, { headers: { 'x-hook': 'get' } })).status).toBe(200);
    expect(await outcomeOf(second.runId)).toMatchObject({
      timeout: false,
      method: 'GET',
      url: expect.stringMatching(/\?status=done$/),
      header: 'get',
      body: '',
    });
  }, 90_000);

  it('when no one calls the webhook, then waitForWebhook resumes timed out', async () => {
    const { runId } = await start('1s');
    expect(await outcomeOf(runId)).toEqual({ timeout: true });
  }, 60_000);

  it("when a webhook URL names another binding's user, an unknown run, a bad event id or a method no client sends, then it is a 404, 400 or 405 and nothing is stored", async () => {
    // The earlier tests' runs have ended: nothing else writes while the database is compared.
    await Promise.all(started.map((id) => workflow.finished(id)));
    const { runId, url } = await start();
    await waiting(runId, url);
    const base = suite.replicas[0]!.queueUrl(suite.target);
    const eventId = url.slice(url.lastIndexOf('/') + 1);
    // The run's own delivery completes just after its waiter shows: its acknowledgement may still land.
    const before = await settledSnapshot(suite.inspect);
    const ask = async (path: string, method = 'POST') => {
      const response = await fetch(`${base}${path}`, { method, body: method === 'GET' ? undefined : 'x' });
      return [response.status, await response.json()] as const;
    };
    expect(await ask(`/v2/workflows/hooks/tenant-b.cache/${runId}/${eventId}`)).toEqual([
      404,
      { error: 'webhook user tenant-b.cache not found' },
    ]);
    expect(await ask(`/v2/workflows/hooks/tenant-a.cache/wfr_unknown/${eventId}`, 'PUT')).toEqual([
      404,
      { error: 'workflow run wfr_unknown not found' },
    ]);
    expect((await ask(`/v2/workflows/hooks/tenant-a.cache/${runId}/bad!event`, 'DELETE'))[0]).toBe(400);
    // The other binding's queue URL with this run: its database does not hold the run.
    const other = await fetch(
      `${suite.replicas[0]!.queueUrl(suite.otherTarget)}/v2/workflows/hooks/tenant-b.cache/${runId}/${eventId}`,
      { method: 'POST', body: 'x' },
    );
    expect(other.status).toBe(404);
    const traced = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http
        .request(
          `${base}/v2/workflows/hooks/tenant-a.cache/${runId}/${eventId}`,
          { method: 'TRACE' },
          resolve,
        )
        .on('error', reject)
        .end(),
    );
    expect(traced.statusCode).toBe(405);
    expect(traced.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    traced.resume();
    expect(await snapshotDatabase(suite.inspect)).toEqual(before);
    expect(await suite.inspect.exists(queueKeys(suite.config.keyPrefix).workflowNotices(runId))).toBe(0);
  }, 60_000);

  it("when a client sends the token in QStash's format, then it is the binding's token; with another binding's user id or password it is a 401", async () => {
    const { target, otherTarget } = suite;
    const base = suite.replicas[0]!.queueUrl(target);
    const asToken = (token: string) => new Client({ baseUrl: base, token });
    expect(
      await asToken(buildQStashFormatToken('tenant-a.cache', target.token)).getWaiters({ eventId: 'evt_x' }),
    ).toEqual([]);
    await expect(
      asToken(buildQStashFormatToken('tenant-b.cache', target.token)).getWaiters({ eventId: 'evt_x' }),
    ).rejects.toMatchObject({ status: 401 });
    await expect(
      asToken(buildQStashFormatToken('tenant-a.cache', otherTarget.token)).getWaiters({ eventId: 'evt_x' }),
    ).rejects.toMatchObject({ status: 401 });
  }, 30_000);
});
