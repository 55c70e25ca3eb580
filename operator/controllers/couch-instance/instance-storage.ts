import { EngineQueryError, getEngineJson, type EngineQuery } from './engine-query.js';

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
export async function measureInstanceStorage(query: EngineQuery): Promise<InstanceStorage> {
  const all = await allDatabasesInfo(query);
  if (all !== undefined) return all;
  const names = await getEngineJson(query, '/_all_dbs');
  if (!Array.isArray(names) || !names.every((name): name is string => typeof name === 'string'))
    throw new EngineQueryError('BadResponse', `${query.origin}/_all_dbs: not a list of names`);
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
async function allDatabasesInfo(query: EngineQuery): Promise<InstanceStorage | undefined> {
  let rows: unknown;
  try {
    rows = await getEngineJson(query, '/_dbs_info');
  } catch (err) {
    // Not there (404), or /_dbs_info taken for a database name by a server without it (400, 405).
    if (err instanceof EngineQueryError && [400, 404, 405].includes(err.status ?? 0)) return undefined;
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

async function fileSizeOf(query: EngineQuery, name: string): Promise<number> {
  const info = (await getEngineJson(query, `/${encodeURIComponent(name)}`)) as DatabaseInfo | null;
  return fileSizeIn(query, name, info ?? undefined);
}

function fileSizeIn(query: EngineQuery, name: string, info: DatabaseInfo | undefined): number {
  const size = info?.sizes?.file ?? info?.disk_size;
  if (typeof size !== 'number' || !Number.isFinite(size) || size < 0)
    throw new EngineQueryError('BadResponse', `${query.origin}/${name}: no file size in the database's info`);
  return size;
}
