import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { WorkflowRunPage, WorkflowRunRow } from '../lib/api-types.js';
import { Banner, formatEpochMs as at } from './common.js';
import { RunWaits } from './RunWaits.js';

const STATE_LABELS: Record<WorkflowRunRow['state'], string> = {
  RUN_STARTED: 'Running',
  RUN_SUCCESS: 'Succeeded',
  RUN_FAILED: 'Failed',
  RUN_CANCELED: 'Cancelled',
};

function Steps({ run }: { run: WorkflowRunRow }) {
  return (
    <details>
      <summary>
        {run.steps.length} step{run.steps.length === 1 ? '' : 's'}
        {run.result !== undefined && ' and the result'}
      </summary>
      <ol className="steps" data-testid="workflow-steps">
        {run.steps.map((step, i) => (
          <li key={i} data-step={step.name}>
            <strong>{step.name}</strong> <span className="muted">{step.type}</span>
            {step.parallel && <span className="muted"> (parallel)</span>}
            {step.output !== '' && (
              <pre className="wrap" data-testid="step-output">
                {step.output}
              </pre>
            )}
            {step.errors.map((error, j) => (
              <p key={j} className="error-text" data-testid="step-error">
                {error}
              </p>
            ))}
          </li>
        ))}
      </ol>
      {run.result !== undefined && (
        <p>
          Result: <code data-testid="workflow-result">{run.result}</code>
        </p>
      )}
    </details>
  );
}

/**
 * The binding's workflow runs (its own client.logs() route, through the console server), newest
 * first, each with its state, start and end, its steps with their outputs and errors, what a
 * waiting one waits for (RunWaits), and Cancel for a running one. Outputs are shown as text, cut to a readable length by the server.
 */
export function WorkflowRuns({ base }: { base: string }) {
  const [page, setPage] = useState<WorkflowRunPage>();
  const [error, setError] = useState<ApiError>();
  const [notice, setNotice] = useState<string>();

  const load = useCallback(() => {
    api<WorkflowRunPage>('GET', `${base}/workflow-runs`).then(
      (answer) => {
        setPage(answer);
        setError(undefined);
      },
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base]);
  useEffect(load, [load]);

  const cancel = async (runId: string): Promise<void> => {
    setNotice(undefined);
    setError(undefined);
    try {
      await api('DELETE', `${base}/workflow-runs/${encodeURIComponent(runId)}`);
      setNotice(`Workflow run ${runId} cancelled.`);
      load();
    } catch (err) {
      if (err instanceof ApiError) setError(err);
    }
  };

  return (
    <section className="card" aria-labelledby="workflow-runs-heading" data-testid="workflow-runs">
      <div className="page-head">
        <h2 id="workflow-runs-heading">Workflow runs</h2>
        <button type="button" className="button small secondary" onClick={load}>
          Refresh
        </button>
      </div>
      {error && <Banner kind="error">{error.message}</Banner>}
      {notice && <Banner kind="info">{notice}</Banner>}
      {page && page.runs.length === 0 && <p className="muted">No workflow runs.</p>}
      {page && page.runs.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Workflow runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
                <th scope="col">Steps</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {page.runs.map((run) => (
                <tr key={run.runId} data-run-id={run.runId}>
                  <td className="wrap">
                    <code>{run.runId}</code>
                    <div className="muted">{run.url}</div>
                  </td>
                  <td data-testid="workflow-state">{STATE_LABELS[run.state]}</td>
                  <td>{at(run.startedAt)}</td>
                  <td>{at(run.finishedAt)}</td>
                  <td className="wrap">
                    <Steps run={run} />
                    <RunWaits base={base} run={run} />
                  </td>
                  <td>
                    {run.state === 'RUN_STARTED' && (
                      <button
                        type="button"
                        className="button small secondary"
                        onClick={() => void cancel(run.runId)}
                        aria-label={`Cancel ${run.runId}`}
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {page?.more && <p className="muted">Only the newest {page.runs.length} runs are shown.</p>}
    </section>
  );
}
