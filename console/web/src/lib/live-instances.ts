import { useEffect, useRef, useState } from 'react';
import { api, namespacePath, sessionEnded, ApiError } from './api-client.js';
import type { InstanceList, InstanceRow } from './api-types.js';

export interface LiveInstances {
  list: InstanceList | undefined;
  rows: InstanceRow[];
  /** Set while the API server or the console is away; the rows stay as they were. */
  problem: string | undefined;
  error: ApiError | undefined;
}

/**
 * The instance list, then its changes from the server-sent events of .../instances/stream (a watch
 * made with the user's token), which starts with a snapshot of its own so nothing falls between.
 */
export function useLiveInstances(namespace: string): LiveInstances {
  const [list, setList] = useState<InstanceList>();
  const [rows, setRows] = useState<Map<string, InstanceRow>>(new Map());
  const [problem, setProblem] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const source = useRef<EventSource | undefined>(undefined);

  useEffect(() => {
    let cancelled = false;
    const base = `${namespacePath(namespace)}/instances`;
    api<InstanceList>('GET', base).then(
      (loaded) => {
        if (cancelled) return;
        setList(loaded);
        setRows(new Map(loaded.items.map((row) => [row.name, row])));
        if (!loaded.permissions.watch.allowed) return;
        const events = new EventSource(`${base}/stream`);
        source.current = events;
        const data = <T>(event: Event): T => JSON.parse((event as MessageEvent<string>).data) as T;
        events.addEventListener('snapshot', (event) => {
          setRows(new Map(data<{ items: InstanceRow[] }>(event).items.map((row) => [row.name, row])));
          setProblem(undefined);
        });
        events.addEventListener('upsert', (event) => {
          const row = data<InstanceRow>(event);
          setRows((current) => new Map(current).set(row.name, row));
        });
        events.addEventListener('delete', (event) => {
          const { name } = data<{ name: string }>(event);
          setRows((current) => {
            const next = new Map(current);
            next.delete(name);
            return next;
          });
        });
        events.addEventListener('unavailable', (event) =>
          setProblem(data<{ message: string }>(event).message),
        );
        events.addEventListener('available', () => setProblem(undefined));
        events.addEventListener('open', () => setProblem(undefined));
        events.addEventListener('session-ended', (event) => {
          events.close();
          sessionEnded(data<{ message: string }>(event).message);
        });
        events.addEventListener('forbidden', (event) => {
          events.close();
          setProblem(data<{ message: string }>(event).message);
        });
        events.addEventListener('error', () => {
          if (events.readyState === EventSource.CLOSED) {
            // Refused outright (401 after the session expired, 429): ask the session why.
            api('GET', '/api/session').catch(() => undefined);
            setProblem('Live updates stopped. Reload the page to resume them.');
          } else {
            setProblem('Live updates are interrupted; reconnecting. The list shows the last known state.');
          }
        });
      },
      (err: unknown) => {
        if (!cancelled && err instanceof ApiError) setError(err);
      },
    );
    return () => {
      cancelled = true;
      source.current?.close();
    };
  }, [namespace]);

  const sorted = [...rows.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { list, rows: sorted, problem, error };
}
