import { Fragment, useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { MessageDetail, MessageGroup, MessagePage, MessageRow } from '../lib/api-types.js';
import { Banner } from './common.js';

/** How often the open page re-reads the queue's events. */
const REFRESH_MS = 5_000;

const GROUPS: { group: MessageGroup | 'all'; label: string }[] = [
  { group: 'all', label: 'All' },
  { group: 'in-flight', label: 'In flight' },
  { group: 'delivered', label: 'Delivered' },
  { group: 'failed', label: 'Failed' },
  { group: 'cancelled', label: 'Cancelled' },
];

const BADGE: Record<MessageRow['state'], string> = {
  Delayed: 'phase-hibernated',
  Queued: 'phase-pending',
  Delivering: 'phase-waking',
  Retrying: 'phase-waking',
  Delivered: 'phase-running',
  Failed: 'phase-failed',
  Cancelled: '',
};

const time = (ms: number | null): string => (ms === null ? '—' : new Date(ms).toLocaleString());

function answerOf(row: { lastResponseStatus: number | null; lastError: string | null }): string {
  if (row.lastResponseStatus !== null) return String(row.lastResponseStatus);
  return row.lastError ?? '—';
}

/** What the list leaves out: the request as delivered and every attempt with its answer. */
function MessageDetails({ base, messageId }: { base: string; messageId: string }) {
  const [detail, setDetail] = useState<MessageDetail>();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    api<MessageDetail>('GET', `${base}/messages/${encodeURIComponent(messageId)}`).then(
      setDetail,
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base, messageId]);
  if (error) return <Banner kind="error">{error.message}</Banner>;
  if (!detail) return <p className="muted">Loading the message…</p>;
  return (
    <div className="message-detail" data-testid="message-detail">
      <h3>Request</h3>
      <p>
        {detail.method ?? 'POST'} <span className="wrap">{detail.url}</span>
      </p>
      {detail.headers.length > 0 && (
        <dl className="headers" data-testid="message-headers">
          {detail.headers.map(([name, value], i) => (
            <div key={i}>
              <dt>{name}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      )}
      {detail.body !== null && (
        <pre tabIndex={0} aria-label="Message body (its start)" data-testid="message-body">
          {detail.body}
        </pre>
      )}
      <h3>Attempts</h3>
      {detail.attemptLog.length === 0 ? (
        <p className="muted">No attempt yet.</p>
      ) : (
        <ol className="attempts" data-testid="attempt-log">
          {detail.attemptLog.map((attempt, i) => (
            <li key={i}>
              <span data-testid="attempt-summary">
                {time(attempt.startedAt)}: {attempt.outcome}
                {attempt.responseStatus !== null ? `, status ${attempt.responseStatus}` : ''}
                {attempt.error !== null && attempt.responseStatus === null ? `, ${attempt.error}` : ''}
              </span>
              {attempt.responseBody !== null && (
                <pre tabIndex={0} aria-label={`Answer to attempt ${i + 1}`} data-testid="attempt-answer">
                  {attempt.responseBody}
                </pre>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/**
 * A binding's messages, in flight, delivered, failed and cancelled, with their attempts and the
 * receiver's last status, folded by the console server from the queue's own events; re-read every
 * few seconds while the page is visible. An in-flight message can be cancelled from its row.
 */
export function Messages({ base }: { base: string }) {
  const [group, setGroup] = useState<MessageGroup | 'all'>('all');
  const [page, setPage] = useState<MessagePage>();
  const [error, setError] = useState<ApiError>();
  const [notice, setNotice] = useState<string>();
  const [open, setOpen] = useState<string>();

  const load = useCallback(() => {
    const query = group === 'all' ? '' : `?group=${group}`;
    api<MessagePage>('GET', `${base}/messages${query}`).then(
      (next) => {
        setPage(next);
        setError(undefined);
      },
      // The rows already shown stay: a banner says the queue is away.
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base, group]);
  useEffect(() => {
    load();
    const timer = setInterval(() => {
      if (!document.hidden) load();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  const cancel = async (messageId: string): Promise<void> => {
    setNotice(undefined);
    try {
      await api('DELETE', `${base}/messages/${encodeURIComponent(messageId)}`);
      setNotice(`Message ${messageId} cancelled.`);
      load();
    } catch (err) {
      if (err instanceof ApiError) setError(err);
    }
  };

  return (
    <section className="card" aria-labelledby="messages-heading" data-testid="messages">
      <div className="page-head">
        <h2 id="messages-heading">Messages</h2>
        <button type="button" className="button small secondary" onClick={load}>
          Refresh
        </button>
      </div>
      <div className="actions tight" role="group" aria-label="Show messages">
        {GROUPS.map((choice) => (
          <button
            key={choice.group}
            type="button"
            className="button small"
            aria-pressed={group === choice.group}
            onClick={() => setGroup(choice.group)}
          >
            {choice.label}
          </button>
        ))}
      </div>
      {error && <Banner kind="error">{error.message}</Banner>}
      {notice && <Banner kind="info">{notice}</Banner>}
      {page?.partial && (
        <p className="help">
          Showing the messages of the latest {page.eventsRead} queue events; older messages are not listed.
        </p>
      )}
      {page && page.messages.length === 0 && <p className="muted">No messages here.</p>}
      {page && page.messages.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Messages, most recently changed first</caption>
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">Destination</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last status</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {page.messages.map((row) => (
                <Fragment key={row.messageId}>
                  <tr data-message-id={row.messageId}>
                    <td className="wrap">
                      <code>{row.messageId}</code>
                      {row.label !== null && <div className="muted">{row.label}</div>}
                    </td>
                    <td className="wrap">{row.url}</td>
                    <td>
                      <span className={`badge ${BADGE[row.state]}`} data-testid="message-state">
                        {row.state}
                      </span>
                    </td>
                    <td data-testid="message-attempts">
                      {row.historyComplete ? row.attempts : `≥ ${row.attempts}`}
                    </td>
                    <td className="wrap" data-testid="message-status">
                      {answerOf(row)}
                    </td>
                    <td>{time(row.nextDeliveryAt)}</td>
                    <td>{time(row.updatedAt)}</td>
                    <td>
                      <div className="actions tight">
                        <button
                          type="button"
                          className="button small secondary"
                          aria-expanded={open === row.messageId}
                          aria-label={`Details of ${row.messageId}`}
                          onClick={() => setOpen(open === row.messageId ? undefined : row.messageId)}
                        >
                          Details
                        </button>
                        {row.group === 'in-flight' && (
                          <button
                            type="button"
                            className="button small secondary"
                            aria-label={`Cancel ${row.messageId}`}
                            onClick={() => void cancel(row.messageId)}
                          >
                            Cancel
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                  {open === row.messageId && (
                    <tr>
                      <td colSpan={8}>
                        <MessageDetails base={base} messageId={row.messageId} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
