import type { Readable } from 'node:stream';
import { request as httpRequest, type Dispatcher } from 'undici';

/** A CouchDB call of a backup or restore failed; carries no credentials. */
export class CouchRequestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CouchRequestError';
  }
}

export interface CouchConnection {
  /** The instance's CouchDB, `http://<pod ip>:<port>`: backups never go through the gateway. */
  origin: string;
  credentials: { username: string; password: string };
  signal?: AbortSignal | undefined;
  /** How long each request may wait for its answer's headers. */
  timeoutMs: number;
}

export interface DatabaseInfo {
  db_name: string;
  doc_count: number;
  doc_del_count?: number;
  update_seq: string | number;
  sizes?: { file?: number; external?: number; active?: number };
  /** pouchdb-server's name for sizes.file. */
  disk_size?: number;
}

export interface ChangesPage {
  results: { id: string; deleted?: boolean; changes: { rev: string }[] }[];
  last_seq: string | number;
}

export interface CouchDocument {
  _id: string;
  _rev: string;
  _deleted?: boolean;
  _attachments?: Record<string, AttachmentStub>;
  [field: string]: unknown;
}

export interface AttachmentStub {
  content_type?: string;
  length?: number;
  digest?: string;
  stub?: boolean;
}

/** `_design/x` keeps its slash (CouchDB routes on it); every other id is one path segment. */
export function documentPath(id: string): string {
  for (const prefix of ['_design/', '_local/'])
    if (id.startsWith(prefix)) return prefix + encodeURIComponent(id.slice(prefix.length));
  return encodeURIComponent(id);
}

/** The few CouchDB 3.x HTTP calls a backup and a restore make, on one instance. */
export class CouchReader {
  private readonly authorization: string;

  constructor(private readonly connection: CouchConnection) {
    const { username, password } = connection.credentials;
    this.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }

  /**
   * One call. `body` is JSON to send, or a stream of JSON text (sent chunked, never whole in
   * memory). The deadline covers the wait for the answer's headers only, counted from the end of
   * what is sent: a large attachment may stream for minutes either way.
   *
   * undici's request() rather than fetch(): its body is a Node.js stream that stops reading the
   * socket while the consumer is behind. fetch() in Node.js 20 keeps reading into its web stream's
   * queue whatever the consumer does, so a backup held each attachment whole (about twice over)
   * while gzip and the upload caught up (bench/backup-attachment-memory.ts measures both).
   */
  private async request(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: { json: unknown } | { stream: Readable },
  ): Promise<Dispatcher.ResponseData> {
    const headersDeadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const armDeadline = (): void => {
      timer = setTimeout(
        () => headersDeadline.abort(new Error('no answer in time')),
        this.connection.timeoutMs,
      );
    };
    const signals = [headersDeadline.signal];
    if (this.connection.signal) signals.push(this.connection.signal);
    let payload: string | Readable | undefined;
    if (body && 'json' in body) payload = JSON.stringify(body.json);
    if (body && 'stream' in body) {
      body.stream.once('end', armDeadline);
      payload = body.stream;
    } else armDeadline();
    let response: Dispatcher.ResponseData;
    try {
      response = await httpRequest(new URL(path, this.connection.origin), {
        method,
        headers: {
          accept: 'application/json',
          authorization: this.authorization,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: payload ?? null,
        signal: AbortSignal.any(signals),
        // The deadline above covers the headers; a body streams as long as it takes.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
    } catch (err) {
      throw new CouchRequestError(`${method} ${path}: ${reasonOf(err, signals)}`, undefined, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      const text = (await response.body.text().catch(() => '')).slice(0, 200);
      throw new CouchRequestError(
        `${method} ${path} answered ${response.statusCode}: ${text}`,
        response.statusCode,
      );
    }
    return response;
  }

  async json<T>(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<T> {
    const response = await this.request(method, path, body === undefined ? undefined : { json: body });
    return (await response.body.json()) as T;
  }

  /** As json(), with the request's JSON text streamed from `body`. */
  async streamedJson<T>(method: Dispatcher.HttpMethod, path: string, body: Readable): Promise<T> {
    const response = await this.request(method, path, { stream: body });
    return (await response.body.json()) as T;
  }

  async version(): Promise<string> {
    return (await this.json<{ version?: string }>('GET', '/')).version ?? 'unknown';
  }

  allDatabases(): Promise<string[]> {
    return this.json<string[]>('GET', '/_all_dbs');
  }

  databaseInfo(db: string): Promise<DatabaseInfo> {
    return this.json<DatabaseInfo>('GET', `/${encodeURIComponent(db)}`);
  }

  security(db: string): Promise<Record<string, unknown>> {
    return this.json<Record<string, unknown>>('GET', `/${encodeURIComponent(db)}/_security`);
  }

  changes(db: string, since: string | number, limit: number): Promise<ChangesPage> {
    const query = new URLSearchParams({ style: 'main_only', since: String(since), limit: String(limit) });
    return this.json<ChangesPage>('GET', `/${encodeURIComponent(db)}/_changes?${query}`);
  }

  /** The winning revisions, with their history (revs=true) and attachment stubs, never bodies. */
  async bulkGet(db: string, refs: { id: string; rev: string }[]): Promise<CouchDocument[]> {
    const answer = await this.json<{ results: { docs: ({ ok: CouchDocument } | { error: unknown })[] }[] }>(
      'POST',
      `/${encodeURIComponent(db)}/_bulk_get?revs=true`,
      { docs: refs },
    );
    const documents: CouchDocument[] = [];
    for (const result of answer.results)
      for (const doc of result.docs) if ('ok' in doc && !doc.ok._deleted) documents.push(doc.ok);
    return documents;
  }

  /** An attachment's bytes as a stream: one attachment never sits whole in memory. */
  async attachment(db: string, id: string, rev: string, name: string): Promise<Readable> {
    const path = `/${encodeURIComponent(db)}/${documentPath(id)}/${encodeURIComponent(name)}?rev=${encodeURIComponent(rev)}`;
    return (await this.request('GET', path)).body;
  }
}

/** The abort reason when a deadline or the caller's signal ended the call, else the error's own. */
function reasonOf(err: unknown, signals: AbortSignal[]): string {
  for (const signal of signals)
    if (signal.aborted) return (signal.reason as Error | undefined)?.message ?? 'aborted';
  return (err as Error).message;
}
