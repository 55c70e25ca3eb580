import { Banner, formatTime, PhaseBadge, Reason } from '../components/common.js';
import { useLiveInstances } from '../lib/live-instances.js';
import { Link } from '../lib/router.js';
import { safeHttpUrl } from '../lib/safe-url.js';

export function InstanceListPage({ namespace }: { namespace: string }) {
  const { list, rows, problem, error } = useLiveInstances(namespace);
  const create = list?.permissions.create;
  return (
    <>
      <div className="page-head">
        <h1>CouchDB instances</h1>
        {create?.allowed ? (
          <Link to="/instances/new" className="button primary">
            Create instance
          </Link>
        ) : (
          <button type="button" className="button primary" disabled aria-describedby="create-reason">
            Create instance
          </button>
        )}
      </div>
      <Reason id="create-reason" permission={create} />
      {problem && <Banner kind="warning">{problem}</Banner>}
      {error && <Banner kind="error">{error.message}</Banner>}
      {!list && !error && <p className="muted">Loading instances…</p>}
      {list && rows.length === 0 && <p className="empty card">No instances in {namespace} yet.</p>}
      {rows.length > 0 && (
        <div className="table-wrap">
          <table className="instances" data-testid="instance-table">
            <caption className="visually-hidden">Instances in namespace {namespace}, updated live</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phase</th>
                <th scope="col">Plan</th>
                <th scope="col" className="optional">
                  Endpoint
                </th>
                <th scope="col" className="optional">
                  Size
                </th>
                <th scope="col" className="optional">
                  Last cold start
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.name} data-instance={row.name}>
                  <th scope="row">
                    <Link to={`/instances/${encodeURIComponent(row.name)}`}>{row.name}</Link>
                  </th>
                  <td data-testid="phase">
                    <PhaseBadge phase={row.phase} />
                  </td>
                  <td>
                    {row.plan}
                    {row.keepAlive ? ' · keep alive' : ''}
                  </td>
                  <td className="optional endpoint">
                    {safeHttpUrl(row.endpoint) ? (
                      <code>{row.endpoint}</code>
                    ) : (
                      <span className="muted">{row.endpoint ?? 'not yet'}</span>
                    )}
                  </td>
                  <td className="optional">{row.size}</td>
                  <td className="optional">{formatTime(row.lastColdStart)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
