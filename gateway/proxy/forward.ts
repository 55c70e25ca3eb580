import type http from 'node:http';
import { pipeline, Transform } from 'node:stream';
import type { Dispatcher } from 'undici';
import { buildClientHeaders, buildUpstreamHeaders, type ResponseHeaderRewrites } from './forward-headers.js';
import type { ForwardedFor } from './forwarded-for.js';
import { isolatesResponse, PATH_FORM_ISOLATION_HEADERS } from './path-form-isolation.js';
import { rewriteLocation, rewriteSetCookie } from './response-rewrite.js';

export interface ForwardOptions {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** The instance's address, `http://<ip>:<port>`. */
  origin: string;
  /** Path and query for the instance, still percent-encoded. */
  upstreamPath: string;
  /** `/db/<ns>/<name>` in the path form, `` in the host form: see response-rewrite.ts. */
  basePath: string;
  /** How the client reached the gateway (or the trusted proxy in front of it): see forwarded-for.ts. */
  forwarded: ForwardedFor;
  /** More response headers, flat [name, value, ...] (X-Settee-Cold-Start). */
  extraHeaders?: readonly string[] | undefined;
  /**
   * Time the instance's part: a `Server-Timing: upstream;dur=<ms>` response header tells how long
   * the instance took from the request's dispatch to its response head (set on a request released
   * from a wake, where it splits the engine's first request from the gateway's own forward).
   */
  timeUpstream?: boolean;
  /** Told when the instance could not be reached or broke off. */
  errors: UpstreamErrorListener;
  /**
   * Metering: the response body's bytes are added to `bytesOut`, and a chunked request body's to
   * `bytesIn` as it streams (a body with a Content-Length was counted from the header).
   */
  counts?: { bytesIn: number; bytesOut: number } | undefined;
  /** The request's body, already read by the gateway (a _bulk_docs it had to look into); else streamed. */
  body?: Buffer | undefined;
}

/** An object rather than a callback, so the caller passes itself instead of a closure per request. */
export interface UpstreamErrorListener {
  /** `responseStarted`: the status line already went to the client (only cutting the connection is left). */
  onUpstreamError(err: Error, responseStarted: boolean): void;
}

/** One forwarded request in flight; the caller ends it when the client goes away. */
export interface UpstreamExchange {
  /** The client closed its connection: the upstream request is aborted unless it already ended. */
  clientClosed(): void;
}

/** The W3C Server-Timing header: where the time of a response went, read by browsers' developer tools. */
export const SERVER_TIMING_HEADER = 'Server-Timing';

/** Whether a request carries a body to stream (a GET without one must not be sent as chunked). */
export function hasRequestBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Streams one request to an instance and its response back, through the pooled keep-alive
 * connections of `dispatcher` (an undici Agent), without buffering either body: backpressure from
 * the client pauses the upstream read, a client that goes away aborts the upstream request (the
 * caller reports it through `clientClosed`, from the one 'close' listener it has anyway). Any
 * method goes (COPY too).
 */
export function forward(dispatcher: Dispatcher, options: ForwardOptions): UpstreamExchange {
  const { req } = options;
  const exchange = new ForwardExchange(options);
  dispatcher.dispatch(
    {
      origin: options.origin,
      path: options.upstreamPath,
      method: req.method as Dispatcher.HttpMethod,
      headers: buildUpstreamHeaders(req.rawHeaders, options.forwarded),
      body: options.body ?? requestBodyOf(req, options.counts),
    },
    exchange,
  );
  return exchange;
}

/**
 * The body to stream upstream. A chunked upload has no Content-Length to count, so it goes through
 * a Transform that adds each chunk to bytesIn; a 'data' listener on the request instead would start
 * it flowing before undici reads it. Only chunked bodies pay for the extra stream.
 */
function requestBodyOf(
  req: http.IncomingMessage,
  counts: ForwardOptions['counts'],
): http.IncomingMessage | Transform | null {
  if (!hasRequestBody(req)) return null;
  if (counts === undefined || req.headers['content-length'] !== undefined) return req;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counts.bytesIn += chunk.length;
      callback(null, chunk);
    },
  });
  // pipeline: an upload that breaks off destroys the counted stream too, so undici sees the error.
  pipeline(req, counted, () => {});
  return counted;
}

/**
 * undici's handler for one exchange. A class rather than an object of closures: this runs for
 * every request, and its methods live once on the prototype.
 */
class ForwardExchange implements Dispatcher.DispatchHandlers, UpstreamExchange, ResponseHeaderRewrites {
  private abortUpstream: ((err?: Error) => void) | undefined;
  private resume: (() => void) | undefined;
  private waitingForDrain = false;
  private finished = false;
  /** The gateway answered the client itself meanwhile: see onHeaders. */
  private superseded = false;
  /** performance.now() at dispatch, when the upstream's time is reported (timeUpstream). */
  private readonly dispatchedAt: number | undefined;

  constructor(private readonly options: ForwardOptions) {
    this.dispatchedAt = options.timeUpstream ? performance.now() : undefined;
  }

  clientClosed(): void {
    if (!this.finished) this.abortUpstream?.(new Error('the client closed the connection'));
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) return true; // informational; the final response follows
    const { res, basePath, upstreamPath } = this.options;
    if (res.headersSent) {
      // The client got a 408 for a body that stopped arriving (client-silence.ts) and its
      // connection is closing: the instance's answer has nowhere to go.
      this.superseded = true;
      this.abortUpstream?.(new Error('the gateway already answered the client'));
      return false;
    }
    this.resume = resume;
    const headers = buildClientHeaders(rawHeaders, this, this.options.extraHeaders);
    if (isolatesResponse(basePath, upstreamPath)) headers.push(...PATH_FORM_ISOLATION_HEADERS);
    if (this.dispatchedAt !== undefined)
      headers.push(
        SERVER_TIMING_HEADER,
        `upstream;dur=${(performance.now() - this.dispatchedAt).toFixed(1)}`,
      );
    // No cork of our own: node:http corks the socket on the first write and flushes on the next
    // tick, so the head and a body that arrived in the same read leave in one write.
    res.writeHead(statusCode, statusText, headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const { res, counts } = this.options;
    if (counts !== undefined) counts.bytesOut += chunk.length;
    if (res.write(chunk)) return true;
    // Backpressure: the drain listener is added the first time the client falls behind, not per request.
    if (!this.waitingForDrain) {
      this.waitingForDrain = true;
      res.on('drain', () => this.resume?.());
    }
    return false;
  }

  onComplete(): void {
    this.finished = true;
    this.options.res.end();
  }

  onError(err: Error): void {
    this.finished = true;
    if (!this.superseded) this.options.errors.onUpstreamError(err, this.options.res.headersSent);
  }

  locationForClient(location: string): string {
    const { basePath, forwarded, origin } = this.options;
    return rewriteLocation(location, {
      basePath,
      publicOrigin: forwarded.host === undefined ? undefined : `${forwarded.proto}://${forwarded.host}`,
      upstreamOrigin: origin,
    });
  }

  setCookieForClient(cookie: string): string {
    return rewriteSetCookie(cookie, this.options.basePath);
  }
}
