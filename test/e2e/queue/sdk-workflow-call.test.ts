import { Client } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';
import { startWorkflowEndpoints, type WorkflowEndpoints } from '../../helpers/queue/workflow-endpoints.js';

/**
 * context.call through the unchanged @upstash/workflow 1.3.3: the gateway makes the outbound
 * request as an ordinary message (through the SSRF guard) and its callback brings the answer
 * back to the run, which sees the status, headers and body.
 */
describe('context.call with the @upstash/workflow SDK', () => {
  const suite = useSdkQueueSuite();
  let endpoints: WorkflowEndpoints;
  const answers = new Map<string, { status: number; body: unknown }>();

  beforeAll(async () => {
    endpoints = await startWorkflowEndpoints({
      target: suite.target,
      queueUrl: suite.replicas[1]!.queueUrl(suite.target),
      workflows: {
        caller: {
          route: async (context) => {
            const { url } = context.requestPayload as { url: string };
            const answer = await context.call('call', {
              url,
              method: 'POST',
              body: JSON.stringify({ ask: 'hello' }),
            });
            await context.run('record', () =>
              answers.set(context.workflowRunId, { status: answer.status, body: answer.body }),
            );
          },
        },
      },
    });
  });

  afterAll(async () => {
    await endpoints?.close();
  });

  const client = (): Client =>
    new Client({ baseUrl: suite.replicas[0]!.queueUrl(suite.target), token: suite.target.token });
  const finished = (runId: string) =>
    waitFor(
      `run ${runId} finished`,
      async () => {
        const run = await new WorkflowRunStore(suite.inspect, queueKeys(suite.config.keyPrefix)).get(runId);
        return run && run.state !== 'RUN_STARTED' ? run : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 25 },
    );

  it('when a step calls a URL that answers 200 or 404, then the gateway sends the request and the run gets each status and body', async () => {
    for (const status of [200, 404]) {
      suite.receiver.respond = () => status;
      const before = suite.receiver.deliveries.length;
      const { workflowRunId } = await client().trigger({
        url: endpoints.expressUrl('caller'),
        body: { url: `${suite.receiver.baseUrl}/called-${status}` },
      });
      expect((await finished(workflowRunId)).state).toBe('RUN_SUCCESS');
      const calls = suite.receiver.deliveries.slice(before);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.body.toString()).toBe('{"ask":"hello"}');
      expect(answers.get(workflowRunId)?.status).toBe(status);
    }
  });
});
