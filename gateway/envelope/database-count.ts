import type http from 'node:http';
import type { Dispatcher } from 'undici';

/** Longest wait for an instance's list of databases before the create goes through uncounted. */
const COUNT_TIMEOUT_MS = 5_000;

/**
 * How many databases an instance holds, asked of the instance itself (GET /_all_dbs) with the
 * client's own credentials right before it creates one: creates are rare, and a count the operator
 * measured minutes ago would let a burst of creates through. CouchDB's own databases (_users,
 * _replicator) are not counted. Undefined when the instance would not say (the client may not list
 * databases, and then CouchDB refuses its create anyway): the create is forwarded and CouchDB
 * decides. Creates of one instance count one at a time per gateway process (database-create-turns.ts).
 */
export async function countDatabases(
  dispatcher: Dispatcher,
  origin: string,
  client: http.IncomingHttpHeaders,
): Promise<number | undefined> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (client.authorization !== undefined) headers.authorization = client.authorization;
  if (client.cookie !== undefined) headers.cookie = client.cookie;
  try {
    const response = await dispatcher.request({
      origin,
      path: '/_all_dbs',
      method: 'GET',
      headers,
      signal: AbortSignal.timeout(COUNT_TIMEOUT_MS),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return undefined;
    }
    const names: unknown = await response.body.json();
    if (!Array.isArray(names)) return undefined;
    return names.filter((name) => typeof name === 'string' && !name.startsWith('_')).length;
  } catch {
    return undefined;
  }
}
