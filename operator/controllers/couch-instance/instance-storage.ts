import got, { HTTPError, ParseError, TimeoutError } from 'got';

export type StorageQueryErrorCode = 'Unauthorized' | 'HttpError' | 'Timeout' | 'Unreachable' | 'BadResponse';

/** The instance could not say how much it holds. Carries no credentials. */
export class StorageQueryError extends Error {
  constructor(
    readonly code: StorageQueryErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageQueryError';
  }
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
 * How much an instance holds: GET /_all_dbs, then GET /{db} for each, summing `sizes.file` (the
 * database file's size on disk, what the volume fills with; PouchDB-based servers say `disk_size`).
 * One attempt, no retry: the caller keeps the last measurement when this fails.
 */
export async function measureInstanceStorage(query: StorageQuery): Promise<InstanceStorage> {
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

async function fileSizeOf(query: StorageQuery, name: string): Promise<number> {
  const info = (await getJson(query, `/${encodeURIComponent(name)}`)) as DatabaseInfo | null;
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
    return new StorageQueryError(code, `${where} answered ${status}`, { cause: err });
  }
  if (err instanceof TimeoutError)
    return new StorageQueryError('Timeout', `${where} did not answer in time`, { cause: err });
  if (err instanceof ParseError)
    return new StorageQueryError('BadResponse', `${where}: the answer is not JSON`, { cause: err });
  const reason = err instanceof Error ? err.message : String(err);
  return new StorageQueryError('Unreachable', `${where}: ${reason}`, { cause: err });
}
