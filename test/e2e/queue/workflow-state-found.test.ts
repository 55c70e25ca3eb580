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
  const item = (headers: Record<string, string>, name: string, body = '{"marker":"fz-new"}') => ({
    destination: fixture.url(name),
    headers: { 'upstash-workflow-url': fixture.url(name), ...headers },
    body,
  });
  const batch = (items: readonly ReturnType<typeof item>[]) =>
    send('/v2/batch', 'POST', JSON.stringify(items), { 'content-type': 'application/json' });

  it('when a batch starts a run in one item and names a cancelled run in a later one, then it is a 400 and no run starts', async () => {
    const [cancelled] = await fixture.runs('cancelled', 1);
    const before = await snapshot();
    const answer = await batch([
      item({ 'upstash-workflow-init': 'true', 'upstash-workflow-runid': 'wfr_fz-found-new' }, 'quick'),
      item({ 'upstash-workflow-runid': cancelled! }, 'sleeper'),
    ]);
    const diff = diffRecords(before, await snapshot());
    expect([answer.status, answer.body, unchanged(diff) ? 'unchanged' : diff]).toEqual([
      400,
      JSON.stringify({
        error: "Upstash-Workflow-Init: a request's triggers and steps must be published separately",
      }),
      'unchanged',
    ]);
  });

  it('when a batch of triggers has an invoke naming an unknown invoker after a plain trigger, then it is a 404 and no run starts', async () => {
    const before = await snapshot();
    const invoke = JSON.stringify({
      workflowRunId: 'wfr_fz-found-nobody',
      workflowUrl: fixture.url('quick'),
      step: { stepId: 1, stepName: 'i', stepType: 'Invoke', concurrent: 1 },
    });
    const answer = await batch([
      item({ 'upstash-workflow-init': 'true', 'upstash-workflow-runid': 'wfr_fz-found-first' }, 'quick'),
      item(
        {
          'upstash-workflow-init': 'true',
          'upstash-workflow-invoke': 'true',
          'upstash-workflow-runid': 'wfr_fz-found-invoked',
        },
        'quick',
        invoke,
      ),
    ]);
    const after = await snapshot();
    const diff = diffRecords(before, after);
    expect([
      answer.status,
      answer.body,
      unchanged(diff) ? 'unchanged' : diff,
      await suite.inspect.exists(keys.workflowRun('wfr_fz-found-first')),
    ]).toEqual([
      404,
      JSON.stringify({ error: 'workflow run wfr_fz-found-nobody not found' }),
      'unchanged',
      0,
    ]);
  });
});
