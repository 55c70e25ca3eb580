import { useEffect, useState } from 'react';
import { Banner } from '../components/common.js';
import { api, ApiError, namespacePath } from '../lib/api-client.js';
import type { BindingRow } from '../lib/api-types.js';
import { Link } from '../lib/router.js';

export function QueueListPage({ namespace }: { namespace: string }) {
  const [rows, setRows] = useState<BindingRow[]>();
  const [error, setError] = useState<ApiError>();
  useEffect(() => {
    api<{ items: BindingRow[] }>('GET', `${namespacePath(namespace)}/bindings`).then(
      (list) => setRows(list.items),
      (err: unknown) => err instanceof ApiError && setError(err),
    );
  }, [namespace]);
  return (
    <>
      <h1>Webhook queues</h1>
      <p className="lead">
        Each QueueBinding attaches the QStash-compatible webhook queue to one of your Redis or Valkey
        databases.
      </p>
      {error && <Banner kind="error">{error.message}</Banner>}
      {!rows && !error && <p className="muted">Loading queues…</p>}
      {rows && rows.length === 0 && <p className="empty card">No QueueBindings in {namespace}.</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">QueueBindings in namespace {namespace}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Engine</th>
                <th scope="col">Server</th>
                <th scope="col" className="optional">
                  Queue URL
                </th>
                <th scope="col">Ready</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.name}>
                  <th scope="row">
                    <Link to={`/queues/${encodeURIComponent(row.name)}`}>{row.name}</Link>
                  </th>
                  <td>{row.engine}</td>
                  <td>{row.server ?? 'not checked yet'}</td>
                  <td className="optional endpoint">
                    <code>{row.queueUrl ?? '—'}</code>
                  </td>
                  <td>{row.ready ? 'Ready' : (row.readyMessage ?? 'Not ready')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
