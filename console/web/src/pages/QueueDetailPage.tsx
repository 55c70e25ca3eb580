import { useEffect, useState } from 'react';
import { Banner, EventsTable, PlainField, Reason, SecretField } from '../components/common.js';
import { api, ApiError, namespacePath } from '../lib/api-client.js';
import type { BindingDetail, QueueEnv } from '../lib/api-types.js';
import { showsQueueBlock } from '../lib/queue-block.js';
import { Link } from '../lib/router.js';
import { DeadLetters } from '../components/DeadLetters.js';
import { Messages } from '../components/Messages.js';
import { WorkflowRuns } from '../components/WorkflowRuns.js';

function QueueBlock({
  base,
  detail,
  onRotated,
}: {
  base: string;
  detail: BindingDetail;
  onRotated: () => void;
}) {
  const [env, setEnv] = useState<QueueEnv>();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    if (!detail.permissions.readEnv.allowed) return;
    api<QueueEnv>('GET', `${base}/env`).then(
      setEnv,
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [
    base,
    detail.permissions.readEnv.allowed,
    detail.signingKeys?.nextGeneration,
    detail.signingKeys?.currentGeneration,
  ]);
  const rotate = async (): Promise<void> => {
    setError(undefined);
    try {
      await api('POST', `${base}/rotate-signing-keys`);
      onRotated();
    } catch (err) {
      if (err instanceof ApiError) setError(err);
    }
  };
  return (
    <section className="card" aria-labelledby="queue-heading" data-testid="queue-block">
      <h2 id="queue-heading">Queue</h2>
      <p>
        Set these in your application; the QStash SDK reads the same values as QSTASH_URL, QSTASH_TOKEN,
        QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY (both sets are in the .env file).
      </p>
      <Reason id="env-reason" permission={detail.permissions.readEnv} />
      {error && <Banner kind="error">{error.message}</Banner>}
      {env && (
        <dl className="fields">
          <PlainField id="VQUEUE_URL" label="VQUEUE_URL" value={env.VQUEUE_URL} copy={env.VQUEUE_URL} />
          <SecretField id="VQUEUE_TOKEN" label="VQUEUE_TOKEN" value={env.VQUEUE_TOKEN} />
          <SecretField
            id="VQUEUE_CURRENT_SIGNING_KEY"
            label="VQUEUE_CURRENT_SIGNING_KEY"
            value={env.VQUEUE_CURRENT_SIGNING_KEY}
          />
          <SecretField
            id="VQUEUE_NEXT_SIGNING_KEY"
            label="VQUEUE_NEXT_SIGNING_KEY"
            value={env.VQUEUE_NEXT_SIGNING_KEY}
          />
        </dl>
      )}
      <div className="actions">
        {detail.permissions.readEnv.allowed && (
          <a className="button" href={`${base}/env-file`} download>
            Download .env
          </a>
        )}
        <button
          type="button"
          className="button secondary"
          onClick={rotate}
          disabled={!detail.permissions.rotate.allowed}
          aria-describedby="rotate-reason"
        >
          Rotate signing keys
        </button>
      </div>
      <Reason id="rotate-reason" permission={detail.permissions.rotate} />
      {detail.signingKeys && (
        <p className="help" data-testid="signing-key-generations">
          Deliveries are signed with key generation {detail.signingKeys.currentGeneration}; generation{' '}
          {detail.signingKeys.nextGeneration ?? detail.signingKeys.currentGeneration + 1} is the next key.
          Verify with both. Rotating makes the next key current and derives a new next one: receivers holding
          the old pair keep verifying; give them the new pair.
        </p>
      )}
    </section>
  );
}

export function QueueDetailPage({ namespace, name }: { namespace: string; name: string }) {
  const base = `${namespacePath(namespace)}/bindings/${encodeURIComponent(name)}`;
  const [detail, setDetail] = useState<BindingDetail>();
  const [error, setError] = useState<ApiError>();
  const [version, setVersion] = useState(0);
  useEffect(() => {
    api<BindingDetail>('GET', base).then(
      setDetail,
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base, version]);
  if (error) return <Banner kind="error">{error.message}</Banner>;
  if (!detail) return <p className="muted">Loading {name}…</p>;
  return (
    <>
      <p className="crumbs">
        <Link to="/queues">Queues</Link> / {name}
      </p>
      <h1>{name}</h1>
      <section className="card" aria-labelledby="database-heading">
        <h2 id="database-heading">Database</h2>
        <dl className="fields">
          <PlainField id="engine" label="Engine" value={detail.row.engine} />
          <PlainField id="server" label="Server" value={detail.row.server ?? 'not checked yet'} />
          <PlainField
            id="host"
            label="Address"
            value={`${detail.connection.host}:${detail.connection.port}${detail.connection.tls ? ' (TLS)' : ''}`}
          />
          <PlainField
            id="ready"
            label="Ready"
            value={detail.row.ready ? 'Yes' : (detail.row.readyMessage ?? 'No')}
          />
        </dl>
      </section>
      {showsQueueBlock({ kind: 'queue-binding', engine: detail.row.engine }) && (
        <QueueBlock base={base} detail={detail} onRotated={() => setVersion(version + 1)} />
      )}
      {showsQueueBlock({ kind: 'queue-binding', engine: detail.row.engine }) &&
        detail.permissions.readEnv.allowed && (
          <>
            <Messages base={base} />
            <DeadLetters base={base} />
            <WorkflowRuns base={base} />
          </>
        )}
      <section className="card" aria-labelledby="events-heading">
        <h2 id="events-heading">Events</h2>
        <EventsTable events={detail.events} />
      </section>
    </>
  );
}
