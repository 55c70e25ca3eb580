import type http from 'node:http';
import { errors as undiciErrors, type Agent } from 'undici';
import type { Logger } from 'winston';
import { isFirstStart } from '../../api/first-start.js';
import type { CouchInstance } from '../../api/couch-instance.js';
import { errorMessage } from '../../observability/logger.js';
import { countDatabases } from '../envelope/database-count.js';
import type { DatabaseCreateTurns, EndTurn } from '../envelope/database-create-turns.js';
import type { FreeEnvelopeGuard, GuardedRequest } from '../envelope/free-envelope-guard.js';
import { classifyRequest, isBulkDocs, isDeletionOnlyBulkDocs } from '../envelope/request-class.js';
import type { InstanceCounts, RequestMeter } from '../envelope/request-meter.js';
import {
  DatabaseLimitError,
  GatewayError,
  InstanceBusyError,
  MalformedCredentialsError,
  StorageLimitError,
  UpstreamError,
  UpstreamTimeoutError,
} from '../http/errors.js';
import { readLimitedBody } from '../http/limited-body.js';
import { sendErrorResponse } from '../http/error-response.js';
import { isClosedUnder, mayResend } from '../http/upstream-resend.js';
import type { GatewayMetrics } from '../metrics.js';
import type { ActivityReporter } from './activity-reporter.js';
import type { AwaitReady } from './await-ready.js';
import type { InstanceConcurrency } from './instance-concurrency.js';
import { isUndecodableBasicCredential } from './basic-credentials.js';
import { forward, hasRequestBody, type UpstreamErrorListener, type UpstreamExchange } from './forward.js';
import { deriveForwardedFor } from './forwarded-for.js';
import type { RequestTarget } from './instance-target.js';
import type { RouteTable } from './route-table.js';
import type { TrustedProxies } from '../http/trusted-proxies.js';
import type { Waker } from './waker.js';

export const COLD_START_HEADER = 'X-Settee-Cold-Start';

/** Largest _bulk_docs body read to see whether it only deletes, above the storage limit; larger ones get 402. */
const BULK_DELETE_BODY_LIMIT = 8 * 1024 * 1024;

export type InstanceTarget = Extract<RequestTarget, { kind: 'instance' }>;
export type InstanceRequestHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: InstanceTarget,
) => void;

export interface InstanceHandlerOptions {
  routes: Pick<RouteTable, 'resolve' | 'get'>;
  awaitReady: AwaitReady;
  waker: Pick<Waker, 'ensureAwake'>;
  activity: Pick<ActivityReporter, 'begin' | 'end'>;
  agent: Agent;
  /** Whose X-Forwarded-Proto/Host/For are believed (SETTEE_GATEWAY_TRUSTED_PROXIES). */
  trustedProxies: TrustedProxies;
  /** SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT, the agent's headersTimeout: named in the 504's reason. */
  upstreamHeadersTimeoutMs: number;
  metrics: GatewayMetrics;
  retryAfterSeconds: number;
  /** The free envelope's checks (gateway/envelope/); undefined when SETTEE_GATEWAY_ENVELOPE is false. */
  envelope: FreeEnvelopeGuard | undefined;
  /** Free instances' database creates, one at a time per instance, so racing creates are counted apart. */
  createTurns: DatabaseCreateTurns;
  /** Requests and bytes per instance (metering); counts what passed the envelope. */
  meter: RequestMeter;
  /** Requests in flight per instance, refused past SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS. */
  concurrency: InstanceConcurrency;
  logger: Logger;
}

/**
 * An instance request, start to end: the route table says which instance (or 404), the request
 * counts as activity until its response ends, and it is forwarded at once when the instance is up,
 * or held while the instance is woken (the waker asks the operator, await-ready waits for /_up)
 * and then forwarded with X-Settee-Cold-Start (and Server-Timing: the instance's own time). Plain node:http, no middleware stack: this is the
 * hot path.
 */
export function createInstanceHandler(options: InstanceHandlerOptions): InstanceRequestHandler {
  return (req, res, target) => new InstanceRequest(options, req, res, target).start();
}

/**
 * One request's state. A class, not a set of closures: its methods exist once, where closures
 * would be created (and, under tsx, named with a defineProperty each) for every request.
 */
class InstanceRequest implements UpstreamErrorListener {
  private instance: CouchInstance | undefined;
  private exchange: UpstreamExchange | undefined;
  /** Where the current attempt went, and whether it is the one retry (after a refusal or a close). */
  private origin: string | undefined;
  /** How long the request was held for a wake, for its cold-start header (undefined: not held). */
  private heldMs: number | undefined;
  private retried = false;
  /** A free instance's database create, counted against the limit before it is forwarded. */
  private countBeforeCreate = false;
  /** The instance's metering counts, which the forward adds the response's bytes to. */
  private counts: InstanceCounts | undefined;
  /** Ends this request's database-create turn, once it is answered. */
  private endCreateTurn: EndTurn | undefined;
  /** A body the gateway read (a deletion-only _bulk_docs above the storage limit), forwarded as is. */
  private body: Buffer | undefined;

  constructor(
    private readonly options: InstanceHandlerOptions,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    private readonly target: InstanceTarget,
  ) {}

  start(): void {
    const { routes, awaitReady } = this.options;
    let instance: CouchInstance;
    try {
      instance = routes.resolve(this.target.instance);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.instance = instance;
    // Before the envelope, the wake and the activity: the engine would answer these a 500.
    if (isUndecodableBasicCredential(this.req.headers.authorization)) {
      this.fail(new MalformedCredentialsError());
      return;
    }
    const origin = awaitReady.readyOrigin(this.target.key, isFirstStart(instance.status?.phase));
    // Before the wake and the activity: a refused request neither wakes an instance nor keeps it awake.
    const { envelope } = this.options;
    if (envelope !== undefined) {
      const refusal = envelope.refusal(this.guardedRequest(instance, origin));
      if (refusal !== undefined) {
        if (refusal instanceof StorageLimitError && isBulkDocs(this.req.method, this.target.upstreamPath))
          void this.admitIfOnlyDeletes(refusal);
        else this.fail(refusal);
        return;
      }
      this.countBeforeCreate =
        envelope.databaseCreated(instance, this.req.method, this.target.upstreamPath) !== undefined;
    }
    this.proceed(instance, origin);
  }

  /**
   * Above the storage limit a _bulk_docs that only deletes must pass, as DELETE does (it is how
   * PouchDB and replication delete): its body is read, up to BULK_DELETE_BODY_LIMIT, and forwarded
   * from memory if every document is a tombstone; otherwise the 402 stands.
   */
  private async admitIfOnlyDeletes(refusal: StorageLimitError): Promise<void> {
    let body: Buffer;
    try {
      body = await readLimitedBody(this.req, BULK_DELETE_BODY_LIMIT);
    } catch {
      if (!this.res.destroyed) this.fail(refusal);
      return;
    }
    if (this.res.destroyed) return;
    if (!isDeletionOnlyBulkDocs(body)) {
      this.fail(refusal);
      return;
    }
    const instance = this.instance!;
    const origin = this.options.awaitReady.readyOrigin(this.target.key, isFirstStart(instance.status?.phase));
    const rateRefusal = this.options.envelope?.rateRefusal(this.guardedRequest(instance, origin));
    if (rateRefusal !== undefined) {
      this.fail(rateRefusal);
      return;
    }
    this.body = body;
    this.proceed(instance, origin);
  }

  /** This request as the free envelope judges it; no ready origin means it waits for a wake. */
  private guardedRequest(instance: CouchInstance, origin: string | undefined): GuardedRequest {
    return {
      instance,
      key: this.target.key,
      ref: this.target.instance,
      method: this.req.method,
      upstreamPath: this.target.upstreamPath,
      heldForWake: origin === undefined,
    };
  }

  /** Past the envelope: count, wake if needed, record the activity, forward or hold. */
  private proceed(instance: CouchInstance, origin: string | undefined): void {
    const { waker, activity, concurrency } = this.options;
    if (!concurrency.tryEnter(this.target.key)) {
      this.fail(new InstanceBusyError(this.target.instance, concurrency.limit));
      return;
    }
    this.counts = this.options.meter.count(
      this.target.key,
      this.target.instance,
      instance.metadata.uid,
      classifyRequest(this.req.method, this.target.upstreamPath),
      this.body === undefined ? this.req.headers['content-length'] : String(this.body.length),
    );
    // The wake request goes out before the activity renewal: the operator reconciles on either, and
    // a reconcile for the renewal alone, started first, would hold the wake's back until it ends.
    if (origin === undefined) waker.ensureAwake(instance);
    // The parts, not a merged object: the reporter builds the Lease's identity only for an instance
    // it has not seen lately, while an object spread here would run in V8's runtime per request.
    activity.begin(this.target.key, this.target.instance, instance.metadata.uid);
    // The one 'close' listener of a forwarded request: the hot path adds no other. on(), not once():
    // a response closes once, and once() wraps each listener in two more objects.
    this.res.on('close', () => {
      concurrency.leave(this.target.key);
      activity.end(this.target.key);
      this.endCreateTurn?.();
      this.exchange?.clientClosed();
    });
    if (origin !== undefined) this.send(origin, undefined, false);
    else void this.holdThenSend(false);
  }

  private send(origin: string, heldMs: number | undefined, retried: boolean): void {
    if (this.countBeforeCreate) {
      this.countBeforeCreate = false;
      void this.countThenSend(origin, heldMs, retried);
      return;
    }
    this.options.metrics.countForwarded(heldMs !== undefined);
    this.origin = origin;
    this.heldMs = heldMs;
    this.retried = retried;
    this.attempt();
  }

  /** Sends the request to `this.origin` through the pool; a retry after a close comes here again. */
  private attempt(): void {
    const { req, res, target, heldMs } = this;
    this.exchange = forward(this.options.agent, {
      req,
      res,
      origin: this.origin as string,
      upstreamPath: target.upstreamPath,
      basePath: target.basePath,
      forwarded: deriveForwardedFor(req, this.options.trustedProxies),
      extraHeaders: heldMs === undefined ? undefined : [COLD_START_HEADER, String(heldMs)],
      timeUpstream: heldMs !== undefined,
      errors: this,
      counts: this.counts,
      body: this.body,
    });
  }

  private async countThenSend(origin: string, heldMs: number | undefined, retried: boolean): Promise<void> {
    const limit = this.options.envelope?.databaseLimit ?? Infinity;
    const endTurn = await this.options.createTurns.take(this.target.key);
    if (this.res.destroyed) {
      endTurn();
      return;
    }
    this.endCreateTurn = endTurn;
    const count = await countDatabases(this.options.agent, origin, this.req.headers);
    if (this.res.destroyed) return;
    if (count !== undefined && count >= limit) this.fail(new DatabaseLimitError(this.target.instance, limit));
    else this.send(origin, heldMs, retried);
  }

  onUpstreamError(err: Error, responseStarted: boolean): void {
    if (this.res.destroyed) {
      // The client went away (its close aborted the upstream request, or its upload broke off): no
      // fault of the instance's, and nobody left to answer. nginx logs it as 499; every client of
      // a continuous _changes feed ends this way, so it is neither a warning nor an error count.
      this.options.logger.debug('client closed the connection before its response ended', {
        instance: this.target.key,
        method: this.req.method,
        responseStarted,
        error: errorMessage(err),
      });
      return;
    }
    // A refused connection sent nothing: the instance went away (hibernated) since the address
    // was cached. Without a body to replay, the request can go the wake path.
    const refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
    if (refused && !responseStarted && !this.retried && !hasRequestBody(this.req)) {
      this.exchange = undefined;
      if (this.origin !== undefined) this.options.awaitReady.invalidate(this.target.key, this.origin);
      void this.holdThenSend(true);
      return;
    }
    // Closed or reset under a safe request with no body: once more (upstream-resend.ts says which
    // and why); the pool checks an idle connection a loop turn before it reuses it.
    const hasBody = this.body !== undefined || hasRequestBody(this.req);
    if (!responseStarted && !this.retried && isClosedUnder(err) && mayResend(this.req.method, hasBody)) {
      this.retried = true;
      this.attempt();
      return;
    }
    if (err instanceof undiciErrors.HeadersTimeoutError) {
      this.fail(new UpstreamTimeoutError(this.target.instance, this.options.upstreamHeadersTimeoutMs, err));
      return;
    }
    this.fail(new UpstreamError(this.target.instance, err));
  }

  private async holdThenSend(retried: boolean): Promise<void> {
    const { routes, waker, awaitReady } = this.options;
    if (retried && this.instance) waker.ensureAwake(routes.get(this.target.instance) ?? this.instance);
    const gone = new AbortController();
    this.res.once('close', () => gone.abort(new Error('the client closed the connection')));
    try {
      const released = await awaitReady.hold(this.target.instance, gone.signal);
      this.send(released.origin, released.heldMs, retried);
    } catch (err) {
      if (!gone.signal.aborted) this.fail(err);
    }
  }

  private fail(err: unknown): void {
    const { req, res } = this;
    const { metrics, logger } = this.options;
    const known = err instanceof GatewayError;
    metrics.countError(known ? err.code : 'INTERNAL');
    const fields = {
      instance: this.target.key,
      method: req.method,
      code: known ? err.code : 'INTERNAL',
      error: errorMessage(err),
      cause: err instanceof Error && err.cause !== undefined ? errorMessage(err.cause) : undefined,
    };
    if (!known) logger.error('instance request failed', fields);
    else if (
      err.code === 'UPSTREAM_FAILED' ||
      err.code === 'UPSTREAM_TIMEOUT' ||
      err.code === 'WAKE_TIMEOUT' ||
      err.code === 'HOLD_QUEUE_FULL'
    ) {
      logger.warn('instance request failed', fields);
    } else logger.debug('instance request refused', fields);
    sendErrorResponse(req, res, err, { retryAfterSeconds: this.options.retryAfterSeconds });
  }
}
