import { useState } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { WorkflowRunRow, WorkflowRunWaiters } from '../lib/api-types.js';
import { formatEpochMs as at } from './common.js';

/**
 * What a running workflow run waits for (context.waitForEvent), in its row: each event and when
 * the wait times out, from the runs list itself; **Waiters** reads the run's waiters (its own, with
 * the timeout URL, and every run of the binding waiting for the same event, as client.getWaiters
 * answers) through the console server. Nothing shows once the run waits for nothing.
 */
export function RunWaits({ base, run }: { base: string; run: WorkflowRunRow }) {
  const [detail, setDetail] = useState<WorkflowRunWaiters>();
  const [error, setError] = useState<ApiError>();
  if (run.waits.length === 0) return null;

  const load = (): void => {
    setError(undefined);
    api<WorkflowRunWaiters>('GET', `${base}/workflow-runs/${encodeURIComponent(run.runId)}/waiters`).then(
      setDetail,
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  };

  return (
    <div data-testid="workflow-waits">
      {run.waits.map((wait) => (
        <p key={`${wait.eventId} ${wait.step}`} data-testid="workflow-wait">
          Waiting for event <code>{wait.eventId}</code> ({wait.step}) until {at(wait.deadline)}
        </p>
      ))}
      <button
        type="button"
        className="button small secondary"
        onClick={load}
        aria-label={`Waiters of ${run.runId}`}
      >
        Waiters
      </button>
      {error && <p className="error-text">{error.message}</p>}
      {detail?.waits.map((wait) => (
        <dl
          key={`${wait.eventId} ${wait.step}`}
          className="headers"
          data-testid="workflow-waiter"
          data-event-id={wait.eventId}
        >
          <div>
            <dt>Event</dt>
            <dd>
              <code>{wait.eventId}</code>
            </dd>
          </div>
          <div>
            <dt>Deadline</dt>
            <dd data-testid="waiter-deadline">{at(wait.waiter?.deadline ?? wait.deadline)}</dd>
          </div>
          <div>
            <dt>Timeout URL</dt>
            <dd data-testid="waiter-timeout-url">{wait.waiter?.timeoutUrl ?? 'none'}</dd>
          </div>
          <div>
            <dt>Runs waiting for it</dt>
            <dd>
              <ul data-testid="event-waiters">
                {wait.waiters.map((waiter) => (
                  <li key={waiter.runId}>
                    <code>{waiter.runId}</code> until {at(waiter.deadline)}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        </dl>
      ))}
    </div>
  );
}
