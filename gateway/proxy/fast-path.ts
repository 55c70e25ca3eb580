import type net from 'node:net';
import type { Logger } from 'winston';
import { isFirstStart } from '../../api/first-start.js';
import type { CouchInstance } from '../../api/couch-instance.js';
import { errorMessage } from '../../observability/logger.js';
import type { FreeEnvelopeGuard, GuardedRequest } from '../envelope/free-envelope-guard.js';
import { classifyRequest } from '../envelope/request-class.js';
import type { InstanceCounts, RequestMeter } from '../envelope/request-meter.js';
import {
  ClientBodyTimeoutError,
  UpstreamError,
  UpstreamTimeoutError,
  type GatewayError,
} from '../http/errors.js';
import type { RawRequestHead } from '../http/raw-request-head.js';
import type { ResponseHead } from '../http/response-head.js';
import type { ClientHeadEdits, SpliceExchange, SpliceFailure } from '../http/splice-exchange.js';
import type { TrustedProxies } from '../http/trusted-proxies.js';
import type { GatewayMetrics } from '../metrics.js';
import type { ActivityReporter } from './activity-reporter.js';
import type { AwaitReady } from './await-ready.js';
import { isUndecodableBasicCredential } from './basic-credentials.js';
import {
  CLIENT_RESPONSE_LINE_NAMES,
  clientHeadEdits,
  upstreamHeadLines,
  type ResponseHeaderRewrites,
} from './forward-headers.js';
import { forwardedFrom, type ForwardedFor } from './forwarded-for.js';
import type { InstanceConcurrency } from './instance-concurrency.js';
import { resolveRequestTarget, type RequestTarget } from './instance-target.js';
import { isolatesResponse, PATH_FORM_ISOLATION_HEADERS } from './path-form-isolation.js';
import { rewriteLocation, rewriteSetCookie } from './response-rewrite.js';
import type { RouteTable } from './route-table.js';

/** The objects the full path (instance-handler.ts) uses: the fast path shares them, it copies none. */
export interface FastPathOptions {
  domain: string | undefined;
  routes: Pick<RouteTable, 'resolve'>;
  awaitReady: Pick<AwaitReady, 'readyOrigin' | 'invalidate'>;
  activity: Pick<ActivityReporter, 'begin' | 'end'>;
  trustedProxies: TrustedProxies;
  upstreamHeadersTimeoutMs: number;
  idleTimeoutMs: number;
  metrics: GatewayMetrics;
  envelope: FreeEnvelopeGuard | undefined;
  meter: RequestMeter;
  concurrency: InstanceConcurrency;
  /** The gateway is shutting down: every response closes its connection, which the full path does. */
  isDraining: () => boolean;
  logger: Logger;
}

type InstanceTarget = Extract<RequestTarget, { kind: 'instance' }>;

/** The path form's isolation headers as the lines the fast path's client response head appends. */
const ISOLATION_LINES = PATH_FORM_ISOLATION_HEADERS.map((text, i) =>
  i % 2 === 0 ? `${text}: ` : `${text}\r\n`,
).join('');

/**
 * The fast path's per-head decision (docs/data-path.md, Option A): it takes a head only when every
 * duty of the full path can be done on the head alone, with the same objects. That is: the route
 * resolves to a known instance that is awake with a ready address, the credentials decode, no
 * database create to count, the instance's concurrency limit admits it, the free envelope has no
 * refusal, the gateway is not draining and the request log (debug) is off. Anything else (a
 * wake, a refusal, a _bulk_docs over the storage limit, a queue or gateway route) returns
 * undefined, and the connection goes to the full path, which answers it as before.
 */
export function createFastPathDecider(
  options: FastPathOptions,
): (head: RawRequestHead, socket: net.Socket) => SpliceExchange | undefined {
  const routing = { domain: options.domain };
  const logRequests = options.logger.isDebugEnabled();
  return (head, socket) => {
    if (logRequests || options.isDraining()) return undefined;
    let target: RequestTarget;
    let instance: CouchInstance;
    try {
      target = resolveRequestTarget({ url: head.target, host: head.host }, routing);
      if (target.kind !== 'instance') return undefined;
      instance = options.routes.resolve(target.instance);
    } catch {
      return undefined;
    }
    const authorization = headerValue(head.rawHeaders, 'authorization');
    if (isUndecodableBasicCredential(authorization)) return undefined;
    const origin = options.awaitReady.readyOrigin(target.key, isFirstStart(instance.status?.phase));
    if (origin === undefined) return undefined;
    const { envelope } = options;
    const guarded: GuardedRequest | undefined = envelope && {
      instance,
      key: target.key,
      ref: target.instance,
      method: head.method,
      upstreamPath: target.upstreamPath,
      heldForWake: false,
    };
    if (envelope?.databaseCreated(instance, head.method, target.upstreamPath) !== undefined) return undefined;
    if (!options.concurrency.tryEnter(target.key)) return undefined;
    // The rate token last, and given back on abandon: a request the full path takes pays it there.
    if (guarded !== undefined && envelope?.refusal(guarded) !== undefined) {
      options.concurrency.leave(target.key);
      return undefined;
    }
    return new FastExchange(options, head, socket, target, instance, origin, guarded);
  };
}

/** One taken request: the upstream head, the response rewrites, and the duties at start and end. */
class FastExchange implements SpliceExchange, ResponseHeaderRewrites {
  readonly upstreamHead: string;
  counts: InstanceCounts | undefined;
  private readonly forwarded: ForwardedFor;

  constructor(
    private readonly options: FastPathOptions,
    private readonly head: RawRequestHead,
    socket: net.Socket,
    private readonly target: InstanceTarget,
    private readonly instance: CouchInstance,
    readonly origin: string,
    private readonly guarded: GuardedRequest | undefined,
  ) {
    const { rawHeaders } = head;
    this.forwarded = forwardedFrom(
      socket,
      {
        host: head.host,
        proto: headerValue(rawHeaders, 'x-forwarded-proto'),
        forwardedHost: headerValue(rawHeaders, 'x-forwarded-host'),
      },
      options.trustedProxies,
    );
    const lines = upstreamHeadLines(head, this.forwarded);
    this.upstreamHead = `${head.method} ${target.upstreamPath} HTTP/1.1\r\n${lines}${head.chunked ? 'Transfer-Encoding: chunked\r\n' : ''}\r\n`;
  }

  /** As instance-handler.ts's proceed() does for a request that needs no wake. */
  start(): void {
    const { target, head, options } = this;
    this.counts = options.meter.count(
      target.key,
      target.instance,
      this.instance.metadata.uid,
      classifyRequest(head.method, target.upstreamPath),
      head.chunked ? undefined : String(head.contentLength),
    );
    options.activity.begin(target.key, target.instance, this.instance.metadata.uid);
    options.metrics.countForwarded(false);
    options.metrics.countSpliced();
  }

  readonly responseLineNames = CLIENT_RESPONSE_LINE_NAMES;

  responseEdits(buf: Buffer, response: ResponseHead): ClientHeadEdits {
    const { basePath, upstreamPath } = this.target;
    return clientHeadEdits(
      buf,
      response,
      this,
      isolatesResponse(basePath, upstreamPath) ? ISOLATION_LINES : '',
    );
  }

  abandon(refused: boolean): void {
    this.options.concurrency.leave(this.target.key);
    if (this.guarded !== undefined) this.options.envelope?.giveBack(this.guarded);
    // The instance went away (hibernated) since its address was cached: the full path wakes it.
    if (refused) this.options.awaitReady.invalidate(this.target.key, this.origin);
  }

  failed(failure: SpliceFailure, cause: Error | undefined): GatewayError {
    const { target, options } = this;
    const err =
      failure === 'timeout'
        ? new UpstreamTimeoutError(target.instance, options.upstreamHeadersTimeoutMs)
        : failure === 'client-silent'
          ? new ClientBodyTimeoutError(options.idleTimeoutMs)
          : new UpstreamError(
              target.instance,
              cause ?? new Error('the instance sent a response that cannot be framed'),
            );
    options.metrics.countError(err.code);
    const fields = {
      instance: target.key,
      method: this.head.method,
      code: err.code,
      error: errorMessage(err),
    };
    if (failure === 'client-silent')
      options.logger.debug('request body stalled; closing the connection', fields);
    else options.logger.warn('instance request failed', fields);
    return err;
  }

  end(): void {
    this.options.concurrency.leave(this.target.key);
    this.options.activity.end(this.target.key);
  }

  locationForClient(location: string): string {
    const { forwarded } = this;
    return rewriteLocation(location, {
      basePath: this.target.basePath,
      publicOrigin: forwarded.host === undefined ? undefined : `${forwarded.proto}://${forwarded.host}`,
      upstreamOrigin: this.origin,
    });
  }

  setCookieForClient(cookie: string): string {
    return rewriteSetCookie(cookie, this.target.basePath);
  }
}

/** The first value of a header, by its lower-case name; the raw head keeps the client's spelling. */
function headerValue(rawHeaders: readonly string[], lowerName: string): string | undefined {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return rawHeaders[i + 1];
  }
  return undefined;
}
