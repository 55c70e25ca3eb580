import { SYSTEM_DATABASES } from '../../api/first-start.js';
import { waitFor } from '../wait.js';
import type { CouchEngine, CouchEngineAdmin } from './types.js';

// Boot, the password hash and the system databases on a loaded CI machine (the kubelet test allows 60 s too).
const SERVING_TIMEOUT_MS = 60_000;

/**
 * Resolves once the engine accepts the admin's password and serves its system databases.
 * - A plain-text password handed to CouchDB (COUCHDB_PASSWORD) is hashed by CouchDB itself in the
 *   background after it starts, and until that is done (about 0.5 s: 600,000 PBKDF2 iterations)
 *   requests with it are refused.
 * - A single node makes _users and _replicator in the background too: until then a document written
 *   to /_replicator is a 404, and a PUT of the database races the engine's own (500 "conflict").
 */
export async function waitUntilServing(engine: CouchEngine, admin: CouchEngineAdmin): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
  const get = (path: string) =>
    fetch(`${engine.url}${path}`, {
      headers: { Authorization: authorization },
      signal: AbortSignal.timeout(5_000),
    });
  await waitFor(
    `${engine.url} to accept its admin and serve ${SYSTEM_DATABASES.join(' and ')}`,
    async () => {
      const session = (await (await get('/_session')).json()) as { userCtx?: { name?: unknown } };
      if (session.userCtx?.name !== admin.username) return undefined;
      const databases = await Promise.all(SYSTEM_DATABASES.map((name) => get(`/${name}`)));
      await Promise.all(databases.map((response) => response.body?.cancel()));
      return databases.every((response) => response.ok) ? true : undefined;
    },
    { timeoutMs: SERVING_TIMEOUT_MS, intervalMs: 20, abort: engine.exited },
  );
}
