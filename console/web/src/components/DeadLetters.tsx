import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { DeadLetter } from '../lib/api-types.js';
import { Banner, formatTime } from './common.js';

/**
 * The binding's dead-letter queue (its own QStash DLQ API, through the console server) with retry
 * and delete, and cancel for a pending message by id. Everything a receiver answered is shown as
 * text, cut to a readable length.
 */
export function DeadLetters({ base }: { base: string }) {
  const [letters, setLetters] = useState<DeadLetter[]>();
  const [error, setError] = useState<ApiError>();
  const [notice, setNotice] = useState<string>();
  const [cancelId, setCancelId] = useState('');

  const load = useCallback(() => {
    api<{ messages: DeadLetter[] }>('GET', `${base}/dlq`).then(
      (page) => {
        setLetters(page.messages);
        setError(undefined);
      },
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base]);
  useEffect(load, [load]);

  const act = async (method: 'POST' | 'DELETE', path: string, done: string): Promise<void> => {
    setNotice(undefined);
    setError(undefined);
    try {
      await api(method, `${base}/${path}`);
      setNotice(done);
      load();
    } catch (err) {
      if (err instanceof ApiError) setError(err);
    }
  };
  const cancel = (event: FormEvent): void => {
    event.preventDefault();
    void act(
      'DELETE',
      `messages/${encodeURIComponent(cancelId.trim())}`,
      `Message ${cancelId.trim()} cancelled.`,
    );
  };

  return (
    <section className="card" aria-labelledby="dlq-heading" data-testid="dead-letters">
      <div className="page-head">
        <h2 id="dlq-heading">Failed messages (dead-letter queue)</h2>
        <button type="button" className="button small secondary" onClick={load}>
          Refresh
        </button>
      </div>
      {error && <Banner kind="error">{error.message}</Banner>}
      {notice && <Banner kind="info">{notice}</Banner>}
      {letters && letters.length === 0 && <p className="muted">No failed messages.</p>}
      {letters && letters.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Dead letters, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">Destination</th>
                <th scope="col">Last answer</th>
                <th scope="col">Failed at</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {letters.map((letter) => (
                <tr key={letter.dlqId} data-dlq-id={letter.dlqId}>
                  <td className="wrap">
                    <code>{letter.messageId}</code>
                  </td>
                  <td className="wrap">{letter.url}</td>
                  <td className="wrap" data-testid="dlq-answer">
                    {letter.responseStatus !== undefined ? `${letter.responseStatus} ` : ''}
                    {(letter.responseBody ?? letter.error ?? '').slice(0, 300)}
                  </td>
                  <td>{formatTime(new Date(letter.createdAt).toISOString())}</td>
                  <td>
                    <div className="actions tight">
                      <button
                        type="button"
                        className="button small"
                        onClick={() =>
                          void act(
                            'POST',
                            `dlq/${encodeURIComponent(letter.dlqId)}/retry`,
                            `Message ${letter.messageId} sent again.`,
                          )
                        }
                        aria-label={`Retry ${letter.messageId}`}
                      >
                        Retry
                      </button>
                      <button
                        type="button"
                        className="button small secondary"
                        onClick={() =>
                          void act(
                            'DELETE',
                            `dlq/${encodeURIComponent(letter.dlqId)}`,
                            `Dead letter ${letter.messageId} deleted.`,
                          )
                        }
                        aria-label={`Delete ${letter.messageId}`}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form className="inline-form" onSubmit={cancel}>
        <label htmlFor="cancel-id">Cancel a pending message by id</label>
        <input
          id="cancel-id"
          value={cancelId}
          onChange={(e) => setCancelId(e.target.value)}
          autoComplete="off"
          placeholder="msg_..."
        />
        <button type="submit" className="button small secondary" disabled={cancelId.trim() === ''}>
          Cancel message
        </button>
      </form>
    </section>
  );
}
