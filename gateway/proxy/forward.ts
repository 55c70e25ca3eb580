import type http from 'node:http';
import type { Agent, Dispatcher } from 'undici';
import { buildUpstreamHeaders, connectionNamedHeaders, isEndToEndHeader } from './forward-headers.js';
import { rewriteLocation, rewriteSetCookiePath, type RewriteContext } from './response-rewrite.js';

export interface ForwardOptions {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  /** The instance's address, `http://<ip>:<port>`. */
  origin: string;
  /** Path and query for the instance, still percent-encoded. */
  upstreamPath: string;
  /** `/db/<ns>/<name>` in the path form, `` in the host form: see response-rewrite.ts. */
  basePath: string;
  /** `http` or `https`, as the client reached the gateway. */
  proto: string;
  /** More response headers, flat [name, value, ...] (X-Settee-Cold-Start). */
  extraHeaders?: readonly string[];
  /**
   * Called when the instance could not be reached or broke off. `responseStarted` tells whether
   * the status line already went to the client (then only cutting the connection is left).
   */
  onError: (err: Error, responseStarted: boolean) => void;
}

/** Whether a request carries a body to stream (a GET without one must not be sent as chunked). */
export function hasRequestBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Streams one request to an instance and its response back, through the pooled keep-alive
 * connections of `agent`, without buffering either body: backpressure from the client pauses the
 * upstream read, a client that goes away aborts the upstream request. Any method goes (COPY too).
 */
export function forward(agent: Agent, options: ForwardOptions): void {
  const { req, res } = options;
  const rewrite: RewriteContext = {
    basePath: options.basePath,
    publicOrigin: `${options.proto}://${req.headers.host ?? ''}`,
    upstreamOrigin: options.origin,
  };
  let abort: ((err?: Error) => void) | undefined;
  let finished = false;
  res.once('close', () => {
    if (!finished) abort?.(new Error('the client closed the connection'));
  });

  const dispatchOptions: Dispatcher.DispatchOptions = {
    origin: options.origin,
    path: options.upstreamPath,
    method: req.method as Dispatcher.HttpMethod,
    headers: buildUpstreamHeaders(req.rawHeaders, {
      remoteAddress: req.socket.remoteAddress,
      proto: options.proto,
      host: req.headers.host,
    }),
    body: hasRequestBody(req) ? req : null,
  };
  const handler: Dispatcher.DispatchHandlers = {
    onConnect(abortUpstream) {
      abort = abortUpstream;
    },
    onHeaders(statusCode, rawHeaders, resume, statusText) {
      if (statusCode < 200) return true; // informational; the final response follows
      // Head and body of a small response arrive in one read; corked until the next tick, they
      // leave in one write instead of two. A streamed body is flushed on every tick as before.
      res.cork();
      process.nextTick(() => res.uncork());
      res.writeHead(statusCode, statusText, responseHeaders(rawHeaders, rewrite, options.extraHeaders));
      res.on('drain', resume);
      return true;
    },
    onData(chunk) {
      return res.write(chunk);
    },
    onComplete() {
      finished = true;
      res.end();
    },
    onError(err) {
      finished = true;
      options.onError(err, res.headersSent);
    },
  };
  agent.dispatch(dispatchOptions, handler);
}

function responseHeaders(
  raw: readonly Buffer[],
  rewrite: RewriteContext,
  extraHeaders: readonly string[] | undefined,
): string[] {
  // latin1 maps bytes to code units one to one, so header values pass through byte for byte.
  const headers: string[] = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) headers[i] = (raw[i] as Buffer).toString('latin1');
  const named = connectionNamedHeaders(headers);
  const result: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] as string;
    const lower = name.toLowerCase();
    if (!isEndToEndHeader(lower, named)) continue;
    let value = headers[i + 1] as string;
    if (lower === 'location') value = rewriteLocation(value, rewrite);
    else if (lower === 'set-cookie') value = rewriteSetCookiePath(value, rewrite.basePath);
    result.push(name, value);
  }
  if (extraHeaders) result.push(...extraHeaders);
  return result;
}
