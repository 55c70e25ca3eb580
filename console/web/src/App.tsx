import { useCallback, useEffect, useState } from 'react';
import { api, onSessionEnd, useCsrfToken } from './lib/api-client.js';
import type { SessionView } from './lib/api-types.js';
import { Link, matchPath, navigate, useLocation } from './lib/router.js';
import { SignInPage } from './pages/SignInPage.js';
import { InstanceListPage } from './pages/InstanceListPage.js';
import { CreateInstancePage } from './pages/CreateInstancePage.js';
import { InstanceDetailPage } from './pages/InstanceDetailPage.js';
import { QueueListPage } from './pages/QueueListPage.js';
import { QueueDetailPage } from './pages/QueueDetailPage.js';
import { NamespaceSwitcher } from './components/NamespaceSwitcher.js';

type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out'; message?: string }
  | { status: 'signed-in'; session: SessionView };

export function App() {
  const location = useLocation();
  const [state, setState] = useState<SessionState>({ status: 'loading' });

  const signedIn = useCallback((session: SessionView) => {
    useCsrfToken(session.csrfToken);
    setState({ status: 'signed-in', session });
  }, []);

  useEffect(() => {
    onSessionEnd((message) => {
      useCsrfToken('');
      setState({ status: 'signed-out', message });
    });
    api<SessionView>('GET', '/api/session').then(
      signedIn,
      (err: { body?: { reason?: string; message?: string } }) =>
        setState({
          status: 'signed-out',
          message: err.body?.reason === 'signed-out' ? undefined : err.body?.message,
        }),
    );
  }, [signedIn]);

  useEffect(() => {
    const title = document.querySelector('h1')?.textContent;
    document.title = title ? `${title} · Settee console` : 'Settee console';
  });

  if (state.status === 'loading') return <p className="loading">Loading…</p>;
  if (state.status === 'signed-out')
    return (
      <SignInPage
        message={state.message}
        onSignedIn={(session) => {
          signedIn(session);
          if (location.pathname === '/sign-in' || location.pathname === '/')
            navigate('/instances', { replace: true });
        }}
      />
    );

  const { session } = state;
  const signOut = (): void => {
    api('DELETE', '/api/session').finally(() => {
      useCsrfToken('');
      setState({ status: 'signed-out', message: 'You have signed out.' });
      navigate('/sign-in', { replace: true });
    });
  };
  const path = location.pathname;
  let page;
  let params: Record<string, string> | undefined;
  if (path === '/instances/new') page = <CreateInstancePage namespace={session.namespace} />;
  else if ((params = matchPath('/instances/:name', path)))
    page = <InstanceDetailPage namespace={session.namespace} name={params.name ?? ''} />;
  else if (path === '/queues') page = <QueueListPage namespace={session.namespace} />;
  else if ((params = matchPath('/queues/:name', path)))
    page = <QueueDetailPage namespace={session.namespace} name={params.name ?? ''} />;
  else page = <InstanceListPage namespace={session.namespace} />;
  const section = path.startsWith('/queues') ? 'queues' : 'instances';

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="brand">
          <Link to="/instances">Settee</Link>
          <NamespaceSwitcher
            session={session}
            onSwitched={(next) => {
              signedIn(next);
              navigate('/instances');
            }}
          />
        </div>
        <nav aria-label="Main">
          <Link to="/instances" aria-current={section === 'instances' ? 'page' : undefined}>
            Instances
          </Link>
          <Link to="/queues" aria-current={section === 'queues' ? 'page' : undefined}>
            Queues
          </Link>
        </nav>
        <div className="user">
          <span className="username" data-testid="username">
            {session.username}
          </span>
          <button type="button" className="button secondary small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      {/* Keyed by namespace: a switch starts every page afresh (its streams and reads). */}
      <main id="main" key={session.namespace}>
        {page}
      </main>
    </>
  );
}
