import got, { HTTPError, ParseError, TimeoutError } from 'got';

export type StorageQueryErrorCode = 'Unauthorized' | 'HttpError' | 'Timeout' | 'Unreachable' | 'BadResponse';

/** The instance could not say how much it holds. Carries no credentials. */
export class StorageQueryError extends Error {
  constructor(
    readonly code: StorageQueryErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options);
    this.status = options?.status;
    this.name = 'StorageQueryError';
  }

  /** The HTTP status the instance answered, when it answered one. */
  readonly status: number | undefined;
}

export interface StorageQuery {
  /** The instance's CouchDB, `http://<pod ip>:<port>`: straight to the pod, so it is no activity. */
  origin: string;
  /** The server admin: only an admin may read every database's info. */
  credentials: { username: string; password: string };
  /** Deadline of each request. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface InstanceStorage {
  /** Sum of every database's file size, CouchDB's own included: they live on the same volume. */
  storageBytes: number;
  /** Databases other than CouchDB's own (names starting with `_`). */
  databases: number;
}

/** What GET /{db} answers, as far as it is read: CouchDB 3.x's sizes.file, or PouchDB's disk_size. */
interface DatabaseInfo {
  sizes?: { file?: unknown };
  disk_size?: unknown;
}

/** Databases asked at once: an instance with hundreds is measured without hundreds of sockets. */
const CONCURRENCY = 4;

/**
 * How much an instance holds: every database's info (one GET /_dbs_info, or GET /_all_dbs then GET
 * /{db} for each), summing `sizes.file` (the database file's size on disk, what the volume fills
 * with; PouchDB-based servers say `disk_size`). One attempt, no retry: the caller keeps the last
 * measurement when this fails.
 */
export async function measureInstanceStorage(query: StorageQuery): Promise<InstanceStorage> {
  const all = await allDatabasesInfo(query);
  if (all !== undefined) return all;
  const names = await getJson(query, '/_all_dbs');
  if (!Array.isArray(names) || !names.every((name): name is string => typeof name === 'string'))
    throw new StorageQueryError('BadResponse', `${query.origin}/_all_dbs: not a list of names`);
  let storageBytes = 0;
  for (let at = 0; at < names.length; at += CONCURRENCY) {
    const sizes = await Promise.all(
      names.slice(at, at + CONCURRENCY).map(async (name) => fileSizeOf(query, name)),
    );
    for (const size of sizes) storageBytes += size;
  }
  return { storageBytes, databases: names.filter((name) => !name.startsWith('_')).length };
}

/**
 * CouchDB 3.2 and later answer every database's info in one GET /_dbs_info; older releases and
 * PouchDB-based servers answer 404 (or 400), and then each database is asked on its own.
 */
async function allDatabasesInfo(query: StorageQuery): Promise<InstanceStorage | undefined> {
  let rows: unknown;
  try {
    rows = await getJson(query, '/_dbs_info');
  } catch (err) {
    // Not there (404), or /_dbs_info taken for a database name by a server without it (400, 405).
    if (err instanceof StorageQueryError && [400, 404, 405].includes(err.status ?? 0)) return undefined;
    throw err;
  }
  if (!Array.isArray(rows)) return undefined;
  let storageBytes = 0;
  let databases = 0;
  for (const row of rows as Array<{ key?: unknown; info?: DatabaseInfo }>) {
    if (typeof row.key !== 'string') return undefined;
    storageBytes += fileSizeIn(query, row.key, row.info);
    if (!row.key.startsWith('_')) databases += 1;
  }
  return { storageBytes, databases };
}

async function fileSizeOf(query: StorageQuery, name: string): Promise<number> {
  const info = (await getJson(query, `/${encodeURIComponent(name)}`)) as DatabaseInfo | null;
  return fileSizeIn(query, name, info ?? undefined);
}

function fileSizeIn(query: StorageQuery, name: string, info: DatabaseInfo | undefined): number {
  const size = info?.sizes?.file ?? info?.disk_size;
  if (typeof size !== 'number' || !Number.isFinite(size) || size < 0)
    throw new StorageQueryError(
      'BadResponse',
      `${query.origin}/${name}: no file size in the database's info`,
    );
  return size;
}

async function getJson(query: StorageQuery, path: string): Promise<unknown> {
  const { username, password } = query.credentials;
  try {
    return await got(`${query.origin}${path}`, {
      headers: {
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
      },
      timeout: { request: query.timeoutMs },
      retry: { limit: 0 },
      signal: query.signal,
    }).json();
  } catch (err) {
    throw queryError(`${query.origin}${path}`, err);
  }
}

function queryError(where: string, err: unknown): StorageQueryError {
  if (err instanceof HTTPError) {
    const status = err.response.statusCode;
    const code = status === 401 || status === 403 ? 'Unauthorized' : 'HttpError';
    return new StorageQueryError(code, `${where} answered ${status}`, { cause: err, status });
  }
  if (err instanceof TimeoutError)
    return new StorageQueryError('Timeout', `${where} did not answer in time`, { cause: err });
  if (err instanceof ParseError)
    return new StorageQueryError('BadResponse', `${where}: the answer is not JSON`, { cause: err });
  const reason = err instanceof Error ? err.message : String(err);
  return new StorageQueryError('Unreachable', `${where}: ${reason}`, { cause: err });
}
