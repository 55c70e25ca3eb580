import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { CACHED_DESTINATION_LENGTH } from '../core/message.js';
import type { GuardedAgents } from './guarded-agents.js';
import { NON_RETRYABLE_HEADER } from './retry-policy.js';

/** How one delivery attempt ended, as the retry policy and the logs need it. */
export interface AttemptResult {
  ok: boolean;
  /** HTTP status of the final response (after redirects), when there was one. */
  status?: number;
  retryAfter?: string;
  nonRetryableHeader?: string;
  /** The SSRF guard refused an address on the way (the destination or a redirect). */
  refused: boolean;
  /** What failed when there was no usable response: timeout, connection refused, ... */
  error?: string;
  /** The start of the response body, kept for the dead-letter list. */
  responseBody?: string;
  /** The final response's headers, each name with its values (QStash's `responseHeader`): on failures, and for a callback. */
  responseHeaders?: Record<string, string[]>;
  /** The final response's body up to `keepResponseBytes`: what a callback reports. */
  responseBodyBytes?: Buffer;
}

export interface DeliveryRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  /** How much of the response body to keep (default 1 KiB); more is read and dropped. */
  keepResponseBytes?: number;
}

export type Deliverer = (request: DeliveryRequest) => Promise<AttemptResult>;

export const USER_AGENT = 'Upstash-QStash';

/** Kept only for failed attempts: what a dead letter shows of the last response. */
function headerValueLists(headers: http.IncomingHttpHeaders): Record<string, string[]> {
  const lists: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) lists[name] = Array.isArray(value) ? value : [value];
  }
  return lists;
}
/** Kept for diagnosis; the rest of a response is read and dropped so the connection can be reused. */
const RESPONSE_BODY_KEPT = 1_024;
/** A response body longer than this is not drained: the connection is closed instead. */
const RESPONSE_BODY_DRAINED = 64 * 1_024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** What a response without a body keeps: one empty Buffer for all of them (it cannot change). */
const NO_BYTES = Buffer.alloc(0);
/** Methods that send Content-Length: 0 for an empty body, as clients usually do. */
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
/** Credentials of the destination's origin that must not follow a redirect to another origin. */
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

interface Hop {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

class DeliveryTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`no complete answer within ${ms} ms`);
    this.name = 'DeliveryTimeoutError';
  }
}

/** The URL `text` names (relative to `base`), or null when it names none. */
function parseUrl(text: string, base?: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A kept-alive connection the destination closed as this request went out on it: Node's servers
 * close one idle for 5 s by default, and a client that reuses it at that moment (a timer late on
 * a busy process) gets a reset before any answer. Usually the destination never read the request,
 * but a reset can also follow its processing: nothing here tells the two apart.
 */
function isStaleConnection(err: Error, request: http.ClientRequest): boolean {
  const code = (err as { code?: unknown }).code;
  return request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE');
}

/**
 * The node:http options of a destination's URL (what node:http builds itself from a URL object on
 * every request: urlToHttpOptions), and the URL, kept per destination string: a queue delivers to
 * few destinations many times, and `new URL` with its options per delivery was 3.3% of the heap a
 * delivery allocated (docs/queue.md, Performance). Emptied when it reaches TARGETS_KEPT, and a
 * destination longer than CACHED_DESTINATION_LENGTH is not kept, so a binding delivering to ever
 * new destinations keeps no more than that many short ones.
 */
interface Target {
  url: URL;
  options: http.RequestOptions;
}
const TARGETS_KEPT = 1_024;

/**
 * The target `url` names, or null when node:http could not send to it: urlToHttpOptions decodes
 * the credentials, and a bad percent-encoding there (`http://u%ZZ@host/`), which the URL parser
 * accepts, throws URIError. Caught here, outside any request's promise, so that it ends the
 * attempt as "not a URL" instead of rejecting the deliverer.
 */
function targetOf(url: URL): Target | null {
  try {
    return { url, options: urlToHttpOptions(url) };
  } catch {
    return null;
  }
}

export class Targets {
  private readonly byDestination = new Map<string, Target>();

  /** The target `text` names, or null when it names no URL node:http can send to. */
  of(text: string): Target | null {
    const kept = this.byDestination.get(text);
    if (kept !== undefined) return kept;
    const url = parseUrl(text);
    const target = url === null ? null : targetOf(url);
    if (target === null || text.length > CACHED_DESTINATION_LENGTH) return target;
    if (this.byDestination.size >= TARGETS_KEPT) this.byDestination.clear();
    this.byDestination.set(text, target);
    return target;
  }
}

interface SendInit {
  method: string;
  headers: Record<string, string>;
  body: Buffer;
  keep: number;
}

/**
 * One request, through the guarded agents, answered with the status, headers and the body's start.
 * A reused connection found closed before any answer (isStaleConnection) is sent once more on
 * another connection when `resendStale`: Node's own advice for keep-alive clients, so the race of
 * Node's 5 s keep-alive does not count as a failed attempt, which would cost a retry's backoff (12 s
 * for the first). As a reset can follow the destination's processing, the resend may deliver twice,
 * which at-least-once delivery allows; one resend at most, so a destination that resets every
 * connection fails its attempts as before. Resent from here, not from an async wrapper awaiting
 * this promise: the wrapper cost every delivery its promise and await.
 */
function sendOnce(
  target: Target,
  init: SendInit,
  deadline: number,
  agents: GuardedAgents,
  resendStale: boolean,
): Promise<Hop> {
  const secure = target.url.protocol === 'https:';
  const transport = secure ? https : http;
  const sendsBody = init.method !== 'HEAD' && (init.body.length > 0 || METHODS_WITH_BODY.has(init.method));
  const headers = sendsBody
    ? Object.assign({}, init.headers, { 'content-length': String(init.body.length) })
    : init.headers;
  // What node:http would build from the URL and these: its options, then ours over them.
  const options = Object.assign({}, target.options, {
    method: init.method,
    headers,
    agent: secure ? agents.https : agents.http,
  });
  const timeoutMs = Math.max(1, deadline - Date.now());
  return new Promise((resolve, reject) => {
    const request = transport.request(options, (response) => {
      let kept = NO_BYTES;
      let received = 0;
      const done = (): void => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: kept });
      };
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (kept.length < init.keep) kept = Buffer.concat([kept, chunk]).subarray(0, init.keep);
        if (received > Math.max(RESPONSE_BODY_DRAINED, init.keep)) {
          response.destroy();
          done();
        }
      });
      response.on('end', done);
      // The status is known; a body cut short does not change the answer.
      response.on('error', done);
    });
    const timer = setTimeout(() => request.destroy(new DeliveryTimeoutError(timeoutMs)), timeoutMs);
    request.on('error', (err) => {
      clearTimeout(timer);
      if (resendStale && isStaleConnection(err, request))
        sendOnce(target, init, deadline, agents, false).then(resolve, reject);
      else reject(err);
    });
    request.end(sendsBody ? init.body : undefined);
  });
}

function describeError(err: unknown): { message: string; refused: boolean } {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return {
    message: typeof code === 'string' ? `${code}: ${message}` : message,
    refused: code === 'DESTINATION_REFUSED',
  };
}

/**
 * Sends deliveries with node:http through the SSRF-guarded keep-alive agents: one request per
 * attempt, no retries of its own (the queue's policy decides), HTTP error statuses returned, not
 * thrown, and redirects followed up to `maxRedirects`, each hop's address checked by the agents.
 * A 303 turns into a GET without a body; other redirects keep method and body; credentials do not
 * follow a redirect to another origin. The timeout covers the whole attempt, redirects included.
 *
 * Not got: measured on this machine, got's stream API sends about 4,100 small POSTs a second on
 * one core where node:http sends about 11,300, and deliveries must reach 5,000 a second with
 * signing and Redis work besides (docs/queue.md).
 */
export function createHttpDeliverer(options: { agents: GuardedAgents; maxRedirects: number }): Deliverer {
  const targets = new Targets();
  return async (request) => {
    const deadline = Date.now() + request.timeoutMs;
    let target = targets.of(request.url);
    // Not the URL itself in the error, which is logged: a destination may hold credentials.
    if (target === null) return { ok: false, refused: false, error: 'the destination is not a URL' };
    const keep = request.keepResponseBytes ?? RESPONSE_BODY_KEPT;
    // The caller's headers as they are: sendOnce copies them to add Content-Length, and a redirect
    // copies them before it drops any, so nothing here changes the caller's object.
    let init: SendInit = { method: request.method, headers: request.headers, body: request.body, keep };
    for (let redirects = 0; ; redirects++) {
      let hop: Hop;
      try {
        hop = await sendOnce(target, init, deadline, options.agents, true);
      } catch (err) {
        const { message, refused } = describeError(err);
        return { ok: false, refused, error: message };
      }
      const location = first(hop.headers.location);
      if (REDIRECTS.has(hop.status) && location !== undefined && options.maxRedirects > 0) {
        if (redirects >= options.maxRedirects) {
          return {
            ok: false,
            status: hop.status,
            refused: false,
            error: `more than ${options.maxRedirects} redirects`,
          };
        }
        const { url } = target;
        const next = parseUrl(location, url);
        const nextTarget = next === null ? null : targetOf(next);
        if (next === null || nextTarget === null) {
          // A failed attempt like any other (retried, then dead-lettered), as QStash treats it.
          // The Location is left out of the error, which is logged: it may hold credentials.
          return {
            ok: false,
            status: hop.status,
            refused: false,
            error: `the ${hop.status} redirect's Location is not a URL`,
          };
        }
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          return {
            ok: false,
            status: hop.status,
            refused: true,
            error: `DESTINATION_REFUSED: redirect to ${next.protocol} is not allowed`,
          };
        }
        const headers = { ...init.headers };
        if (next.origin !== url.origin) for (const name of ORIGIN_BOUND_HEADERS) delete headers[name];
        if (hop.status === 303) {
          delete headers['content-type'];
          init = { method: 'GET', headers, body: NO_BYTES, keep };
        } else {
          init = { ...init, headers };
        }
        // Not kept in `targets`: a redirect's target is not the destination a delivery names.
        target = nextTarget;
        continue;
      }
      const result: AttemptResult = {
        ok: hop.status >= 200 && hop.status < 300,
        status: hop.status,
        refused: false,
      };
      const retryAfter = first(hop.headers['retry-after']);
      if (retryAfter !== undefined) result.retryAfter = retryAfter;
      const nonRetryable = first(hop.headers[NON_RETRYABLE_HEADER]);
      if (nonRetryable !== undefined) result.nonRetryableHeader = nonRetryable;
      if (hop.body.length > 0)
        result.responseBody = hop.body.subarray(0, RESPONSE_BODY_KEPT).toString('utf8');
      if (!result.ok || request.keepResponseBytes !== undefined)
        result.responseHeaders = headerValueLists(hop.headers);
      result.responseBodyBytes = hop.body;
      return result;
    }
  };
}
