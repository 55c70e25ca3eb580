/**
 * What a request to an instance is, for the free envelope: its rate class (Cloudant Lite's three:
 * reads, writes, and queries, which cost the engine most), whether it can grow the instance's
 * data (refused with 402 above the storage limit), and whether it creates a database. Pure and
 * allocation-free: it runs on every free instance's request, reading the method and the
 * still-encoded upstream path with indexOf and charCodeAt only.
 */
export type RequestClass = 'read' | 'write' | 'query';

const QUESTION_MARK = 0x3f;
const SLASH = 0x2f;
const UNDERSCORE = 0x5f;

/** Where the path ends and the query starts. */
function pathEnd(path: string): number {
  const query = path.indexOf('?');
  return query < 0 ? path.length : query;
}

/** Whether the path (before its query) has a segment `segment` (given with its leading slash). */
function hasSegment(path: string, segment: string, end: number): boolean {
  let from = 0;
  for (;;) {
    const at = path.indexOf(segment, from);
    if (at < 0 || at + segment.length > end) return false;
    const after = at + segment.length;
    if (after === end || path.charCodeAt(after) === SLASH) return true;
    from = at + 1;
  }
}

/**
 * Fauxton's files (`/_utils/...`): static assets of the web console, not database requests. A page
 * load fetches dozens at once, which would spend a free instance's read rate before the first read.
 */
export function isConsoleAsset(upstreamPath: string): boolean {
  return upstreamPath.startsWith('/_utils');
}

/** POST endpoints that only read: they carry their arguments in a body. */
const READING_POSTS = [
  '_all_docs',
  '_bulk_get',
  '_changes',
  '_revs_diff',
  '_missing_revs',
  '_ensure_full_commit',
  '_session',
  '_dbs_info',
  '_design_docs',
  '_local_docs',
].map((name) => `/${name}`);

/**
 * read: GET, HEAD and the POSTs that only read (_all_docs, _bulk_get, _changes, _revs_diff, ...);
 * query: Mango (_find, _explain) and views (`_design/<d>/_view/<v>`, and their POST forms);
 * write: everything else (PUT, POST, DELETE, COPY of documents, attachments and databases,
 * _bulk_docs, _replicate, _compact, _purge, ...).
 */
export function classifyRequest(method: string | undefined, upstreamPath: string): RequestClass {
  const end = pathEnd(upstreamPath);
  if (hasSegment(upstreamPath, '/_view', end) || hasSegment(upstreamPath, '/_find', end)) return 'query';
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return 'read';
  if (method !== 'POST') return 'write';
  if (hasSegment(upstreamPath, '/_explain', end)) return 'query';
  for (const segment of READING_POSTS) if (hasSegment(upstreamPath, segment, end)) return 'read';
  return 'write';
}

/** Writes that shrink or keep the data, allowed above the storage limit so a tenant can get under it. */
const SHRINKING_POSTS = ['_compact', '_view_cleanup', '_purge'].map((name) => `/${name}`);

/**
 * Whether a write may add data: PUT, POST and COPY of documents, attachments, databases and
 * design documents, _bulk_docs, _replicate and replication into the instance. DELETE (documents,
 * attachments, databases) never does, nor compaction, view clean-up or purge. A _bulk_docs may
 * or may not: the path cannot tell, so the caller reads its body (isDeletionOnlyBulkDocs).
 */
export function mayGrowData(method: string | undefined, upstreamPath: string): boolean {
  if (method === 'DELETE' || classifyRequest(method, upstreamPath) !== 'write') return false;
  if (method !== 'POST') return true;
  const end = pathEnd(upstreamPath);
  for (const segment of SHRINKING_POSTS) if (hasSegment(upstreamPath, segment, end)) return false;
  return true;
}

/** `POST /{db}/_bulk_docs`: how PouchDB and replication send deletions too. */
export function isBulkDocs(method: string | undefined, upstreamPath: string): boolean {
  return method === 'POST' && hasSegment(upstreamPath, '/_bulk_docs', pathEnd(upstreamPath));
}

/**
 * Whether a _bulk_docs body only deletes: `{"docs": [...]}` whose every document has
 * `"_deleted": true` and nothing but `_id`, `_rev`, `_revisions` and `_deleted` (a tombstone
 * carrying a body or attachments still adds data). Anything else, unparsable JSON included, is
 * not.
 */
export function isDeletionOnlyBulkDocs(body: Buffer): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const docs = (parsed as { docs?: unknown } | null)?.docs;
  if (!Array.isArray(docs) || docs.length === 0) return false;
  return docs.every(
    (doc) =>
      typeof doc === 'object' &&
      doc !== null &&
      (doc as Record<string, unknown>)._deleted === true &&
      Object.keys(doc).every((key) => TOMBSTONE_FIELDS.has(key)),
  );
}

const TOMBSTONE_FIELDS: ReadonlySet<string> = new Set(['_id', '_rev', '_revisions', '_deleted']);

/**
 * The database a `PUT /{db}` creates, still percent-encoded, or undefined for any other request.
 * Names starting with `_` are CouchDB's own (_users, _replicator), which it creates itself.
 */
export function createdDatabase(method: string | undefined, upstreamPath: string): string | undefined {
  if (method !== 'PUT') return undefined;
  const end = pathEnd(upstreamPath);
  let stop = end;
  if (stop > 1 && upstreamPath.charCodeAt(stop - 1) === SLASH) stop -= 1;
  if (stop <= 1 || upstreamPath.charCodeAt(0) !== SLASH) return undefined;
  const slash = upstreamPath.indexOf('/', 1);
  if (slash >= 0 && slash < stop) return undefined;
  if (upstreamPath.charCodeAt(1) === UNDERSCORE || upstreamPath.charCodeAt(1) === QUESTION_MARK)
    return undefined;
  return upstreamPath.slice(1, stop);
}
