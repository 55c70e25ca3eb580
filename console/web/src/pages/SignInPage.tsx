import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { SessionView } from '../lib/api-types.js';
import { Banner } from '../components/common.js';

export function SignInPage({
  message,
  onSignedIn,
}: {
  message?: string | undefined;
  onSignedIn: (session: SessionView) => void;
}) {
  const [token, setToken] = useState('');
  const [namespace, setNamespace] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(
        await api<SessionView>('POST', '/api/session', {
          token: token.trim(),
          namespace: namespace.trim() || undefined,
        }),
      );
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, { error: 'unknown', message: String(err) }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Settee</h1>
      <p className="lead">
        Use a Kubernetes bearer token: a ServiceAccount token or an OIDC ID token your cluster accepts. What
        you can see and do is exactly what your Kubernetes role allows.
      </p>
      {message && !error && <Banner kind="warning">{message}</Banner>}
      {error && <Banner kind="error">{error.message}</Banner>}
      <form onSubmit={submit} className="card form">
        <label htmlFor="token">Token</label>
        <textarea
          id="token"
          name="token"
          rows={5}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
          autoComplete="off"
          spellCheck={false}
          aria-describedby="token-help"
          aria-invalid={error?.body.fields?.token ? true : undefined}
        />
        <p className="help" id="token-help">
          For example <code>kubectl create token my-user -n my-namespace</code>. The token stays in an
          encrypted, HttpOnly cookie; it is never stored in the page.
        </p>
        <label htmlFor="namespace">Namespace (optional for ServiceAccount tokens)</label>
        <input
          id="namespace"
          name="namespace"
          value={namespace}
          onChange={(e) => setNamespace(e.target.value)}
          autoComplete="off"
          aria-describedby="namespace-help"
        />
        <p className="help" id="namespace-help">
          {error?.body.fields?.namespace ?? 'A ServiceAccount opens its own namespace.'}
        </p>
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
