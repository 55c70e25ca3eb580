import {
  buildWorkflowRunRows,
  buildWorkflowRunWaiters,
  WORKFLOW_TEXT_LIMIT,
} from '../../../console/api/workflow-run-view.js';

describe("the console's workflow runs view", () => {
  it('when the logs route answers a finished run with sequential and parallel steps, then its row has the state, times, result and every step in order with its output as text', () => {
    const [row] = buildWorkflowRunRows([
      {
        workflowRunId: 'wfr_1',
        workflowUrl: 'http://app.test/wf',
        workflowState: 'RUN_SUCCESS',
        workflowRunCreatedAt: 1_000,
        workflowRunCompletedAt: 2_000,
        workflowRunResponse: '{"ok":true}',
        label: 'nightly',
        steps: [
          {
            type: 'sequential',
            steps: [{ stepName: 'init', stepType: 'Initial', out: '{}', state: 'STEP_SUCCESS' }],
          },
          {
            type: 'parallel',
            steps: [
              { stepName: 'a', stepType: 'Run', out: { n: 1 }, state: 'STEP_SUCCESS', createdAt: 1_500 },
              {
                stepName: 'b',
                stepType: 'Run',
                out: 'x'.repeat(WORKFLOW_TEXT_LIMIT + 10),
                state: 'STEP_SUCCESS',
              },
            ],
          },
        ],
      },
    ]);
    expect(row).toMatchObject({
      runId: 'wfr_1',
      url: 'http://app.test/wf',
      state: 'RUN_SUCCESS',
      startedAt: 1_000,
      finishedAt: 2_000,
      label: 'nightly',
      result: '{"ok":true}',
    });
    expect(row!.steps.map((s) => [s.name, s.group, s.parallel, s.output.length])).toEqual([
      ['init', 0, false, 2],
      ['a', 1, true, 7],
      ['b', 1, true, WORKFLOW_TEXT_LIMIT + 1],
    ]);
    expect(row!.steps[1]!.output).toBe('{"n":1}');
    expect(row!.steps[2]!.output.endsWith('…')).toBe(true);
  });

  it('when a step reports errors and a run has a state the view does not know, then the errors read status and message, and the run counts as running', () => {
    const [row] = buildWorkflowRunRows([
      {
        workflowRunId: 'wfr_2',
        workflowUrl: 'http://app.test/wf',
        workflowState: 'RUN_PAUSED',
        workflowRunCreatedAt: 1_000,
        steps: [
          {
            type: 'sequential',
            steps: [{ stepName: 's', errors: [{ status: 500, error: 'boom' }, { body: 'late' }] }],
          },
        ],
      },
    ]);
    expect(row!.state).toBe('RUN_STARTED');
    expect(row!.finishedAt).toBeUndefined();
    expect(row!.steps[0]!.errors).toEqual(['500 boom', 'late']);
  });

  it("when a running run's logs end with a wait in progress, then its row has the wait and not a step, and its waiters read each event's getWaiters with the run's own and a timeout URL or none", () => {
    const wait = { stepName: 'pay', stepType: 'Wait', state: 'STEP_PROGRESS', waitEventId: 'evt_paid' };
    const run = {
      workflowRunId: 'wfr_3',
      workflowUrl: 'http://app.test/wf',
      workflowRunCreatedAt: 1_000,
      steps: [
        { type: 'sequential', steps: [{ stepName: 'init', stepType: 'Initial', out: '{}' }] },
        { type: 'next', steps: [{ ...wait, waitTimeoutDeadline: 9_000_000, createdAt: 2_000 }] },
      ],
    };
    const [row] = buildWorkflowRunRows([{ ...run, workflowState: 'RUN_STARTED' }]);
    expect(row!.steps.map((s) => s.name)).toEqual(['init']);
    expect(row!.waits).toEqual([{ eventId: 'evt_paid', step: 'pay', deadline: 9_000_000, since: 2_000 }]);
    // A run that ended waits for nothing, whatever its log says.
    expect(buildWorkflowRunRows([{ ...run, workflowState: 'RUN_CANCELED' }])[0]!.waits).toEqual([]);

    const waiterOf = (runId: string, timeoutUrl?: string) => ({
      url: 'http://app.test/wf',
      headers: { 'Upstash-Workflow-Runid': [runId] },
      deadline: 9_000,
      ...(timeoutUrl !== undefined && { timeoutUrl }),
    });
    const answer = buildWorkflowRunWaiters(
      row!,
      new Map([['evt_paid', [waiterOf('wfr_other', 'http://app.test/late'), waiterOf('wfr_3', '')]]]),
    );
    expect(answer.waits[0]!.waiter).toEqual({
      runId: 'wfr_3',
      url: 'http://app.test/wf',
      deadline: 9_000_000,
      timeoutUrl: null,
    });
    expect(answer.waits[0]!.waiters.map((w) => [w.runId, w.timeoutUrl])).toEqual([
      ['wfr_other', 'http://app.test/late'],
      ['wfr_3', null],
    ]);
    // Taken between the two reads: the wait shows, its waiter is gone.
    expect(buildWorkflowRunWaiters(row!, new Map()).waits[0]).toMatchObject({ waiter: null, waiters: [] });
  });
});
