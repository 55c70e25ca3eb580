import { useWorkflowSuite } from '../../helpers/queue/workflow-suite.js';

/** What a test asks the caller workflow's context.call to do. */
interface CallPlan {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  retries?: number;
  timeout?: `${bigint}s`;
  /** How many of the same call run in parallel (Promise.all). */
  parallel?: number;
  flowControl?: { key: string; parallelism: number };
}

interface CallAnswer {
  status: number;
  header: Record<string, string[]>;
  body: unknown;
}

/**
 * context.call through the unchanged @upstash/workflow 1.3.3: the gateway makes the outbound
 * request as an ordinary message (method, headers, body, timeout, retries, flow control; through
 * the SSRF guard) and its callback brings the answer back to the run, which sees the status,
 * headers and body: non-2xx answers too, and a made-up 504 when the last attempt timed out.
 */
describe('context.call with the @upstash/workflow SDK', () => {
  const answers = new Map<string, CallAnswer[]>();
  const workflow = useWorkflowSuite(() => ({
    workflows: {
      caller: {
        route: async (context) => {
          const plan = context.requestPayload as CallPlan;
          const calls = Array.from({ length: plan.parallel ?? 1 }, (_, i) =>
            context.call(`call-${i}`, {
              url: plan.url,
              method: (plan.method ?? 'POST') as 'POST',
              body: JSON.stringify({ ask: 'hello', i }),
              ...(plan.headers ? { headers: plan.headers } : {}),
              ...(plan.retries === undefined ? {} : { retries: plan.retries, retryDelay: '10' }),
              ...(plan.timeout ? { timeout: plan.timeout } : {}),
              ...(plan.flowControl ? { flowControl: plan.flowControl } : {}),
            }),
          );
          const got = await Promise.all(calls);
          await context.run('record', () =>
            answers.set(
              context.workflowRunId,
              got.map(({ status, header, body }) => ({ status, header, body })),
            ),
          );
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, finished } = workflow;

  const callThrough = async (plan: CallPlan): Promise<CallAnswer[]> => {
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('caller'),
      body: plan,
    });
    expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
    return answers.get(workflowRunId)!;
  };

  it('when a step calls a URL that answers 200 or 404, then the gateway sends the request and the run gets each status and body', async () => {
    for (const status of [200, 404]) {
      suite.receiver.respond = () => status;
      const before = suite.receiver.deliveries.length;
      const [answer] = await callThrough({ url: `${suite.receiver.baseUrl}/called-${status}` });
      const calls = suite.receiver.deliveries.slice(before);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.body.toString()).toBe('{"ask":"hello","i":0}');
      expect(answer).toEqual({
        status,
        header: expect.objectContaining({ 'content-type': ['application/json'] }),
        body: { received: true },
      });
    }
  });

  it('when a call has retries, headers and a method, then each attempt carries them and the run gets the last answer only', async () => {
    let attempts = 0;
    suite.receiver.respond = () => (++attempts < 3 ? 500 : 201);
    const [answer] = await callThrough({
      url: `${suite.receiver.baseUrl}/retried`,
      method: 'PUT',
      headers: { 'x-ask': 'twice' },
      retries: 2,
    });
    expect(answer?.status).toBe(201);
    const calls = suite.receiver.deliveries.filter((d) => d.url.endsWith('/retried'));
    expect(calls.map((d) => [d.method, d.headers['x-ask'], d.headers['upstash-retried']])).toEqual([
      ['PUT', 'twice', '0'],
      ['PUT', 'twice', '1'],
      ['PUT', 'twice', '2'],
    ]);

    // Retries used up on 503s: the run gets the last 503, not a wait.
    suite.receiver.respond = () => 503;
    const [failed] = await callThrough({ url: `${suite.receiver.baseUrl}/unavailable`, retries: 1 });
    expect(failed?.status).toBe(503);
    expect(suite.receiver.deliveries.filter((d) => d.url.endsWith('/unavailable'))).toHaveLength(2);
  });

  it('when the called URL never answers within the timeout, then the run gets a 504 instead of waiting', async () => {
    suite.receiver.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 2_500));
    const started = Date.now();
    const [late] = await callThrough({ url: `${suite.receiver.baseUrl}/slow`, timeout: '1s' });
    expect(late?.status).toBe(504);
    expect(late?.body).toMatch(/ETIMEDOUT/);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('when parallel calls share a flow-control key of parallelism 1, then the called URL answers one at a time', async () => {
    suite.holdDeliveries(300);
    const got = await callThrough({
      url: `${suite.receiver.baseUrl}/throttled`,
      parallel: 3,
      flowControl: { key: 'one-call-at-a-time', parallelism: 1 },
    });
    expect(got.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(suite.inFlight.started).toBe(3);
    expect(suite.inFlight.most).toBe(1);
  });

  it("when a step's call names an address the SSRF guard refuses, then its publish is a 400 naming it and no run is stored", async () => {
    const caller = workflow.endpoints.expressUrl('caller');
    // A call step as the SDK publishes it (context.call), to a private address.
    const response = await fetch(
      `${suite.replicas[0]!.queueUrl(suite.target)}/v2/publish/http://10.0.0.1/x`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${suite.target.token}`,
          'upstash-workflow-runid': 'wfr_guarded',
          'upstash-workflow-init': 'false',
          'upstash-workflow-url': caller,
          'upstash-workflow-calltype': 'toCallback',
          'upstash-callback': caller,
        },
        body: '{}',
      },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/10\.0\.0\.1/);
    expect((await client().logs({ workflowRunId: 'wfr_guarded' })).runs).toEqual([]);
  });

  it("when a running run's context.call names an address the SSRF guard refuses, then its step batch is a 412 and the run ends RUN_FAILED naming it", async () => {
    // A 400 there the SDK takes as "the run was cancelled": the run would stay RUN_STARTED.
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('caller'),
      body: { url: 'http://10.0.0.1/x' } satisfies CallPlan,
    });
    const run = await finished(workflowRunId);
    expect(run.state).toBe('RUN_FAILED');
    const failure = JSON.parse(run.failure!) as { status: number; body: string };
    expect(failure.status).toBe(489);
    expect(failure.body).toMatch(/batch item 0: .*10\.0\.0\.1/);
  });
});
