import { request as plainRequest } from '../../helpers/gateway/http-request.js';
import { diffRecords, snapshotRecords, unchanged } from '../../helpers/queue/workflow-run-records.js';
import { useWorkflowStateFixture } from '../../helpers/queue/workflow-state-fixture.js';

/**
 * The workflow state fuzz's counterexamples (workflow-state-fuzz.test.ts, FUZZ_SEED=17), shrunk to
 * plain cases: each a refusal that must leave every run's record as it was.
 */
describe('workflow route refusals found by the state fuzz', () => {
  const fixture = useWorkflowStateFixture();
  const { workflow, keys } = fixture;
  const suite = workflow.queue;

  const send = (path: string, method: string, body: string, headers: Record<string, string> = {}) =>
    plainRequest(`${suite.replicas[0]!.queueUrl(suite.target)}${path}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${suite.target.token}` },
      body,
      timeoutMs: 15_000,
    });
  const ask = async (path: string) => JSON.parse((await send(path, 'GET', '')).body) as unknown;
  const snapshot = () => snapshotRecords(suite.inspect, keys, ask, [...fixture.events]);

  it('when a batch starts a run in one item and names a cancelled run in a later one, then it is a 400 and no run starts', async () => {
    const [cancelled] = await fixture.runs('cancelled', 1);
    const before = await snapshot();
    const item = (headers: Record<string, string>, name: string) => ({
      destination: fixture.url(name),
      headers: { 'upstash-workflow-url': fixture.url(name), ...headers },
      body: '{"marker":"fz-new"}',
    });
    const answer = await send(
      '/v2/batch',
      'POST',
      JSON.stringify([
        item({ 'upstash-workflow-init': 'true', 'upstash-workflow-runid': 'wfr_fz-found-new' }, 'quick'),
        item({ 'upstash-workflow-runid': cancelled! }, 'sleeper'),
      ]),
      { 'content-type': 'application/json' },
    );
    const diff = diffRecords(before, await snapshot());
    expect([answer.status, answer.body, unchanged(diff) ? 'unchanged' : diff]).toEqual([
      400,
      JSON.stringify({
        error: "Upstash-Workflow-Init: a request's triggers and steps must be published separately",
      }),
      'unchanged',
    ]);
  });
});
