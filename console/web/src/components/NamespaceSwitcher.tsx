import { useEffect, useState, type FormEvent } from 'react';
import { api, ApiError } from '../lib/api-client.js';
import type { ReachableNamespaces, SessionView } from '../lib/api-types.js';

const OTHER = '__other__';

/**
 * The namespace the console shows, chosen among those the user's own role reaches (listed by the
 * server as the user), or typed when their role may not list namespaces. The server checks the
 * choice with a SelfSubjectAccessReview and answers with the session, resealed.
 */
export function NamespaceSwitcher({
  session,
  onSwitched,
}: {
  session: SessionView;
  onSwitched: (session: SessionView) => void;
}) {
  const [reachable, setReachable] = useState<ReachableNamespaces>();
  const [typing, setTyping] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string>();

  useEffect(() => {
    api<ReachableNamespaces>('GET', '/api/session/namespaces').then(setReachable, () =>
      // Without the list the switcher still offers the current namespace and typing another.
      setReachable({ namespaces: [session.namespace], listed: false, truncated: false }),
    );
  }, [session.namespace]);

  const open = async (namespace: string): Promise<void> => {
    setError(undefined);
    try {
      const next = await api<SessionView>('PUT', '/api/session/namespace', { namespace });
      setTyping(false);
      setTyped('');
      onSwitched(next);
    } catch (err) {
      if (err instanceof ApiError) setError(err.body.fields?.namespace ?? err.message);
    }
  };
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    void open(typed.trim());
  };

  const namespaces = reachable?.namespaces ?? [session.namespace];
  return (
    <div className="namespace-switcher">
      <label htmlFor="namespace-select" className="visually-hidden">
        Namespace
      </label>
      <select
        id="namespace-select"
        value={typing ? OTHER : session.namespace}
        onChange={(event) => {
          if (event.target.value === OTHER) setTyping(true);
          else {
            setTyping(false);
            if (event.target.value !== session.namespace) void open(event.target.value);
          }
        }}
      >
        {namespaces.map((namespace) => (
          <option key={namespace} value={namespace}>
            {namespace}
          </option>
        ))}
        <option value={OTHER}>Other namespace…</option>
      </select>
      {typing && (
        <form className="inline-form" onSubmit={submit}>
          <label htmlFor="namespace-other" className="visually-hidden">
            Namespace to open
          </label>
          <input
            id="namespace-other"
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
            placeholder="namespace"
            aria-describedby={error ? 'namespace-error' : undefined}
            aria-invalid={error ? true : undefined}
          />
          <button type="submit" className="button small" disabled={typed.trim() === ''}>
            Open
          </button>
        </form>
      )}
      {error && (
        <p className="reason" id="namespace-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
