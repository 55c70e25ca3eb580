import { useCallback, useEffect, useState } from 'react';
import {
  Banner,
  CopyButton,
  EventsTable,
  formatTime,
  PhaseBadge,
  PlainField,
  Reason,
  SecretField,
} from '../components/common.js';
import { api, ApiError, namespacePath } from '../lib/api-client.js';
import type { InstanceCredentials, InstanceDetail, InstanceRow, Permission } from '../lib/api-types.js';
import { useLiveInstances } from '../lib/live-instances.js';
import { Link, navigate } from '../lib/router.js';
import { safeHttpUrl } from '../lib/safe-url.js';
import { buildSnippets } from '../lib/snippets.js';

/** Why Keep alive cannot be switched: the plan first (as the CRD's rule says), then RBAC. */
export function keepAlivePermission(row: InstanceRow, patch: Permission): Permission {
  if (row.plan !== 'paid' && !row.keepAlive)
    return { allowed: false, reason: 'Keep alive needs plan: paid.' };
  return patch;
}

export function InstanceDetailPage({ namespace, name }: { namespace: string; name: string }) {
  const base = `${namespacePath(namespace)}/instances/${encodeURIComponent(name)}`;
  const [detail, setDetail] = useState<InstanceDetail>();
  const [error, setError] = useState<ApiError>();
  const [actionError, setActionError] = useState<ApiError>();
  const [credentials, setCredentials] = useState<InstanceCredentials>();
  const [busy, setBusy] = useState(false);
  const [confirmName, setConfirmName] = useState('');
  const live = useLiveInstances(namespace);
  const liveRow = live.rows.find((row) => row.name === name);

  const load = useCallback(() => {
    api<InstanceDetail>('GET', base).then(
      (loaded) => {
        setDetail(loaded);
        setError(undefined);
      },
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [base]);
  useEffect(load, [load]);
  // Conditions and Events follow the phase: read them again whenever the live row changes.
  const livePhase = liveRow?.phase;
  const liveKeepAlive = liveRow?.keepAlive;
  useEffect(() => {
    if (livePhase !== undefined) load();
  }, [livePhase, liveKeepAlive, load]);

  if (error) return <Banner kind="error">{error.message}</Banner>;
  if (!detail) return <p className="muted">Loading {name}…</p>;
  const row = liveRow ?? detail.row;
  const endpoint = safeHttpUrl(row.endpoint);
  const keepAlive = keepAlivePermission(row, detail.permissions.patch);

  const reveal = async (): Promise<void> => {
    setActionError(undefined);
    try {
      setCredentials(await api<InstanceCredentials>('GET', `${base}/credentials`));
    } catch (err) {
      if (err instanceof ApiError) setActionError(err);
    }
  };
  const toggleKeepAlive = async (): Promise<void> => {
    setBusy(true);
    setActionError(undefined);
    try {
      const updated = await api<InstanceRow>('PATCH', `${base}/keep-alive`, { keepAlive: !row.keepAlive });
      setDetail({ ...detail, row: updated });
    } catch (err) {
      if (err instanceof ApiError) setActionError(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = async (): Promise<void> => {
    setActionError(undefined);
    try {
      await api('DELETE', base, { confirmName });
      navigate('/instances');
    } catch (err) {
      if (err instanceof ApiError) setActionError(err);
    }
  };

  return (
    <>
      <p className="crumbs">
        <Link to="/instances">Instances</Link> / {name}
      </p>
      <div className="page-head">
        <h1>{name}</h1>
        <span data-testid="detail-phase">
          <PhaseBadge phase={row.phase} />
        </span>
      </div>
      {live.problem && <Banner kind="warning">{live.problem}</Banner>}
      {actionError && <Banner kind="error">{actionError.message}</Banner>}

      <section className="card" aria-labelledby="connection-heading">
        <h2 id="connection-heading">Connection</h2>
        <dl className="fields">
          <PlainField
            id="endpoint"
            label="Endpoint"
            value={row.endpoint ?? 'not assigned yet'}
            copy={row.endpoint ?? undefined}
          />
          {endpoint && (
            <div className="field-row">
              <dt>Fauxton</dt>
              <dd>
                <a href={`${endpoint.replace(/\/+$/, '')}/_utils/`} target="_blank" rel="noopener noreferrer">
                  Open Fauxton (CouchDB&apos;s web UI)
                </a>
              </dd>
            </div>
          )}
        </dl>
        {!credentials ? (
          <>
            <button
              type="button"
              className="button"
              onClick={reveal}
              disabled={!detail.permissions.readCredentials.allowed}
              aria-describedby="credentials-reason"
            >
              Reveal credentials
            </button>
            <Reason id="credentials-reason" permission={detail.permissions.readCredentials} />
          </>
        ) : (
          <>
            <dl className="fields">
              <PlainField
                id="username"
                label="Username"
                value={credentials.username}
                copy={credentials.username}
              />
              <SecretField id="password" label="Password" value={credentials.password} />
              <SecretField id="url" label="URL with credentials" value={credentials.url} />
            </dl>
            <h3>Connect</h3>
            {buildSnippets(row.endpoint ?? '', credentials).map((snippet) => (
              <div key={snippet.id} className="snippet">
                <div className="snippet-head">
                  <span>{snippet.label}</span>
                  <CopyButton value={snippet.code} label={`${snippet.label} snippet`} />
                </div>
                <pre tabIndex={0} aria-label={`${snippet.label} snippet`}>
                  <code>{snippet.code}</code>
                </pre>
              </div>
            ))}
          </>
        )}
      </section>

      <section className="card" aria-labelledby="plan-heading">
        <h2 id="plan-heading">Plan and hibernation</h2>
        <dl className="fields">
          <PlainField id="plan" label="Plan" value={row.plan} />
          <PlainField id="size" label="Storage" value={row.size} />
          <PlainField
            id="idle"
            label="Hibernates after"
            value={row.keepAlive ? 'never (keep alive)' : (row.idleAfter ?? '15m (default)')}
          />
          <PlainField id="cold-start" label="Last cold start" value={formatTime(row.lastColdStart)} />
          <PlainField id="hibernated-at" label="Last hibernated" value={formatTime(detail.hibernatedAt)} />
        </dl>
        <div className="switch-row">
          <button
            type="button"
            role="switch"
            id="keep-alive"
            className="switch"
            aria-checked={row.keepAlive}
            disabled={!keepAlive.allowed || busy}
            onClick={toggleKeepAlive}
            aria-describedby="keep-alive-reason"
          >
            <span className="switch-knob" aria-hidden="true" />
            Keep alive
          </button>
          <Reason id="keep-alive-reason" permission={keepAlive} />
        </div>
        <h3>Add-ons</h3>
        <ul className="plain" data-testid="addons">
          {detail.spec.addons?.largerStorage && (
            <li>Larger storage: {detail.spec.addons.largerStorage.size}</li>
          )}
          {detail.spec.addons?.backups && <li>Backups: {detail.spec.addons.backups.schedule}</li>}
          {detail.spec.addons?.regionPinning && <li>Region: {detail.spec.addons.regionPinning.region}</li>}
          {!detail.spec.addons || Object.keys(detail.spec.addons).length === 0 ? (
            <li className="muted">None</li>
          ) : null}
        </ul>
      </section>

      <section className="card" aria-labelledby="state-heading">
        <h2 id="state-heading">State and recent transitions</h2>
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Conditions</caption>
            <thead>
              <tr>
                <th scope="col">Condition</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Since</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {detail.conditions.map((condition) => (
                <tr key={condition.type}>
                  <td>{condition.type}</td>
                  <td>{condition.status}</td>
                  <td>{condition.reason}</td>
                  <td>{formatTime(condition.lastTransitionTime)}</td>
                  <td className="wrap">{condition.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <h3>Events</h3>
        <EventsTable events={detail.events} />
      </section>

      <section className="card danger" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this instance</h2>
        <p>Deleting removes the instance, its data volume and its credentials. Type its name to confirm.</p>
        <label htmlFor="confirm-name">Instance name</label>
        <input
          id="confirm-name"
          value={confirmName}
          onChange={(e) => setConfirmName(e.target.value)}
          autoComplete="off"
          disabled={!detail.permissions.delete.allowed}
          aria-describedby="delete-reason"
        />
        <button
          type="button"
          className="button danger"
          disabled={!detail.permissions.delete.allowed || confirmName !== name}
          onClick={remove}
        >
          Delete {name}
        </button>
        <Reason id="delete-reason" permission={detail.permissions.delete} />
      </section>
    </>
  );
}
