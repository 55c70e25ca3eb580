import type { CouchInstance } from '../../api/couch-instance.js';
import { RateLimitedError, StorageLimitError, type GatewayError } from '../http/errors.js';
import type { InstanceRef } from '../instance-ref.js';
import type { EnvelopeConfig } from './config.js';
import { RateLimiter } from './rate-limiter.js';
import {
  classifyRequest,
  createdDatabase,
  isConsoleAsset,
  mayGrowData,
  type RequestClass,
} from './request-class.js';

/** What the guard is told of one request. */
export interface GuardedRequest {
  instance: CouchInstance;
  /** `namespace/name` */
  key: string;
  ref: InstanceRef;
  method: string | undefined;
  upstreamPath: string;
  /** Held while its instance woke: such requests are never refused for the rate. */
  heldForWake: boolean;
}

export function isFreePlan(instance: CouchInstance): boolean {
  return instance.spec.plan !== 'paid';
}

/**
 * The free envelope at the gateway: decides, per request to a free instance, whether it passes or
 * which error answers it. Paid instances pass untouched, read from the informer's cache on every
 * request, so a plan change takes effect with the next request, without a restart.
 */
export class FreeEnvelopeGuard {
  private readonly limiter: RateLimiter;

  constructor(
    private readonly config: EnvelopeConfig,
    now: () => number = Date.now,
  ) {
    this.limiter = new RateLimiter(config.ratesPerSecond, config.replicas, now);
  }

  /** The error to answer with, or undefined when the request passes. Allocates only to refuse. */
  refusal(request: GuardedRequest): GatewayError | undefined {
    const { instance, method, upstreamPath } = request;
    if (!isFreePlan(instance)) return undefined;
    const requestClass = classifyRequest(method, upstreamPath);
    if (requestClass === 'write') {
      const used = instance.status?.usage?.storageBytes;
      if (used !== undefined && used > this.config.storage.bytes && mayGrowData(method, upstreamPath))
        return new StorageLimitError(request.ref, this.config.storage.text, used);
    }
    return this.rateRefusalOf(request, requestClass);
  }

  /**
   * The rate's answer alone: for a _bulk_docs the storage limit let through once its body showed
   * it only deletes (instance-handler.ts).
   */
  rateRefusal(request: GuardedRequest): GatewayError | undefined {
    if (!isFreePlan(request.instance)) return undefined;
    return this.rateRefusalOf(request, classifyRequest(request.method, request.upstreamPath));
  }

  /** A request refusal() passed is not sent after all: the rate token it took, if any, goes back. */
  giveBack(request: GuardedRequest): void {
    if (!isFreePlan(request.instance) || !spendsRate(request)) return;
    this.limiter.giveBack(request.key, classifyRequest(request.method, request.upstreamPath));
  }

  private rateRefusalOf(request: GuardedRequest, requestClass: RequestClass): GatewayError | undefined {
    if (!spendsRate(request)) return undefined;
    const waitMs = this.limiter.take(request.key, requestClass);
    if (waitMs === 0) return undefined;
    return new RateLimitedError(
      request.ref,
      requestClass,
      this.config.ratesPerSecond[requestClass],
      Math.max(1, Math.ceil(waitMs / 1000)),
    );
  }

  /** The database a free instance's request creates, which the caller counts first; else undefined. */
  databaseCreated(
    instance: CouchInstance,
    method: string | undefined,
    upstreamPath: string,
  ): string | undefined {
    return isFreePlan(instance) ? createdDatabase(method, upstreamPath) : undefined;
  }

  get databaseLimit(): number {
    return this.config.databases;
  }

  /** The instance was deleted or is paid now: its buckets go. */
  forget(instanceKey: string): void {
    this.limiter.forget(instanceKey);
  }
}

function spendsRate(request: GuardedRequest): boolean {
  return !request.heldForWake && !isConsoleAsset(request.upstreamPath);
}
