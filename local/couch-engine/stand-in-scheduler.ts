/**
 * The stand-in's CouchDB 3.x replication scheduler endpoints, /_scheduler/jobs and
 * /_scheduler/docs, built from what express-pouchdb's replicator (pouchdb-replicator) records in
 * each /_replicator document: `_replication_state` (`triggered` from the moment it starts a
 * replication until it completes or fails, then `completed` or `error`), with the time it set it.
 * pouchdb-replicator keeps its running replications in memory it does not expose, so those records
 * are all there is. The documents are read through express-pouchdb with the caller's own
 * credentials; the front has already checked that the caller is a server admin.
 */
import type http from 'node:http';

export const REPLICATOR_DB = '_replicator';

/** Where the stand-in's express-pouchdb listens, and the node name it reports. */
export interface SchedulerSource {
  /** http://<host>:<port> */
  origin: string;
  node: string;
}

/** A /_replicator document, with the fields pouchdb-replicator writes into it. */
interface ReplicatorDocument {
  _id: string;
  source?: unknown;
  target?: unknown;
  continuous?: boolean;
  create_target?: boolean;
  user_ctx?: { name?: string | null };
  _replication_id?: string;
  _replication_state?: string;
  _replication_state_time?: string;
  _replication_state_reason?: string;
  /** Written with `completed`: PouchDB's replication result. */
  _replication_stats?: { docs_read?: number; docs_written?: number; doc_write_failures?: number };
}

/** A page of a scheduler listing, as CouchDB 3.x pages one. */
interface Page {
  skip: number;
  limit: number | undefined;
}

/** GET /_scheduler/jobs: the replications running now, one job each. */
export async function schedulerJobs(source: SchedulerSource, req: http.IncomingMessage): Promise<object> {
  const jobs = (await replicatorDocuments(source, req)).flatMap((doc) =>
    doc._replication_state === 'triggered' && doc._replication_id ? [schedulerJob(doc, source.node)] : [],
  );
  const page = pageOf(req);
  return { total_rows: jobs.length, offset: page.skip, jobs: pageSlice(jobs, page) };
}

/**
 * GET /_scheduler/docs: every replication document with the state of its replication, the list
 * Fauxton's Replication activity page shows.
 */
export async function schedulerDocs(source: SchedulerSource, req: http.IncomingMessage): Promise<object> {
  const docs = (await replicatorDocuments(source, req))
    .filter((doc) => !doc._id.startsWith('_design/'))
    .map((doc) => schedulerDoc(doc, source.node));
  const page = pageOf(req);
  return { total_rows: docs.length, offset: page.skip, docs: pageSlice(docs, page) };
}

async function replicatorDocuments(
  { origin }: SchedulerSource,
  req: http.IncomingMessage,
): Promise<ReplicatorDocument[]> {
  const response = await fetch(`${origin}/${REPLICATOR_DB}/_all_docs?include_docs=true`, {
    headers: credentialHeaders(req),
  });
  if (!response.ok) throw new Error(`${REPLICATOR_DB}/_all_docs answered ${response.status}`);
  const { rows } = (await response.json()) as { rows: { doc?: ReplicatorDocument }[] };
  return rows.flatMap(({ doc }) => (doc ? [doc] : []));
}

/** The request's own credentials (Basic or cookie), for the front's requests to express-pouchdb. */
export function credentialHeaders(req: http.IncomingMessage): Record<string, string> {
  const { authorization, cookie } = req.headers;
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (cookie !== undefined) headers.cookie = cookie;
  return headers;
}

function schedulerJob(doc: ReplicatorDocument, node: string): object {
  // The only moment the replicator records: when it set the state to triggered (started it).
  const startedAt = doc._replication_state_time ?? null;
  return {
    database: REPLICATOR_DB,
    id: jobId(doc),
    // CouchDB gives the Erlang process running the job; here it runs inside this OS process.
    pid: String(process.pid),
    source: withoutPassword(doc.source),
    target: withoutPassword(doc.target),
    user: doc.user_ctx?.name ?? null,
    doc_id: doc._id,
    history: startedAt === null ? [] : [{ timestamp: startedAt, type: 'started' }],
    node,
    start_time: startedAt,
  };
}

/** CouchDB 3.x's states for a replication document, from pouchdb-replicator's. */
const DOC_STATES: Readonly<Record<string, string>> = {
  triggered: 'running',
  completed: 'completed',
  // pouchdb-replicator gives up on a replication it records as error; CouchDB calls that failed.
  error: 'failed',
};

function schedulerDoc(doc: ReplicatorDocument, node: string): object {
  const state = doc._replication_state === undefined ? 'initializing' : DOC_STATES[doc._replication_state];
  const since = doc._replication_state_time ?? null;
  return {
    database: REPLICATOR_DB,
    doc_id: doc._id,
    id: doc._replication_id === undefined ? null : jobId(doc),
    node,
    source: withoutPassword(doc.source),
    target: withoutPassword(doc.target),
    state: state ?? doc._replication_state,
    info: docInfo(state, doc),
    error_count: state === 'failed' ? 1 : 0,
    last_updated: since,
    start_time: since,
    source_proxy: null,
    target_proxy: null,
  };
}

/** CouchDB's `info`: the error of a failed replication, the counts of a completed one. */
function docInfo(state: string | undefined, doc: ReplicatorDocument): object | null {
  if (state === 'failed') return { error: doc._replication_state_reason ?? null };
  const stats = doc._replication_stats;
  if (state !== 'completed' || stats === undefined) return null;
  return {
    docs_read: stats.docs_read ?? 0,
    docs_written: stats.docs_written ?? 0,
    doc_write_failures: stats.doc_write_failures ?? 0,
  };
}

/** CouchDB's job id is the replication id plus its options; pouchdb-replicator's id is a uuid. */
function jobId(doc: ReplicatorDocument): string {
  const options = `${doc.continuous ? '+continuous' : ''}${doc.create_target ? '+create_target' : ''}`;
  return `${doc._replication_id ?? ''}${options}`;
}

/** A replication endpoint (a URL, a local name, or {url, headers}) as CouchDB shows it: password masked. */
function withoutPassword(endpoint: unknown): unknown {
  const text =
    typeof endpoint === 'object' && endpoint !== null ? (endpoint as { url?: unknown }).url : endpoint;
  if (typeof text !== 'string' || !URL.canParse(text)) return text ?? null;
  const url = new URL(text);
  if (url.password) url.password = '*****';
  return url.href;
}

/** `skip` and `limit` from the query, as CouchDB reads them. */
function pageOf(req: http.IncomingMessage): Page {
  const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
  const limit = Number.parseInt(query.get('limit') ?? '', 10);
  return {
    skip: Math.max(0, Number.parseInt(query.get('skip') ?? '', 10) || 0),
    limit: Number.isNaN(limit) ? undefined : limit,
  };
}

function pageSlice<T>(items: readonly T[], { skip, limit }: Page): T[] {
  return items.slice(skip, limit === undefined ? undefined : skip + limit);
}
