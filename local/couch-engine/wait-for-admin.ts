import { waitFor } from '../wait.js';
import type { CouchEngine, CouchEngineAdmin } from './types.js';

const ADMIN_TIMEOUT_MS = 30_000;

/**
 * Resolves once the engine accepts the admin's password. A plain-text password handed to CouchDB
 * (COUCHDB_PASSWORD) is hashed by CouchDB itself in the background after it starts, and until that
 * is done (about 0.5 s: 600,000 PBKDF2 iterations) requests with it are refused.
 */
export async function waitForAdmin(engine: CouchEngine, admin: CouchEngineAdmin): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
  await waitFor(
    `${engine.url} to accept its admin`,
    async () => {
      const response = await fetch(`${engine.url}/_session`, {
        headers: { Authorization: authorization },
        signal: AbortSignal.timeout(5_000),
      });
      const session = (await response.json()) as { userCtx?: { name?: unknown } };
      return session.userCtx?.name === admin.username ? true : undefined;
    },
    { timeoutMs: ADMIN_TIMEOUT_MS, intervalMs: 20, abort: engine.exited },
  );
}
