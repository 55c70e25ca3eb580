import type { RequestClass } from './request-class.js';

/** One token bucket: `tokens` as of `updatedAt` (ms). */
export interface TokenBucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Takes one token from a bucket that refills at `ratePerSecond` up to `burst`: 0 when taken, else
 * the milliseconds until the next token (the bucket is left as it was, so a refused request costs
 * the tenant nothing). Pure but for the bucket it updates.
 */
export function takeToken(bucket: TokenBucket, ratePerSecond: number, burst: number, nowMs: number): number {
  const elapsed = nowMs - bucket.updatedAt;
  const tokens =
    elapsed > 0 ? Math.min(burst, bucket.tokens + (elapsed * ratePerSecond) / 1000) : bucket.tokens;
  bucket.updatedAt = Math.max(nowMs, bucket.updatedAt);
  if (tokens >= 1) {
    bucket.tokens = tokens - 1;
    return 0;
  }
  bucket.tokens = tokens;
  return Math.ceil(((1 - tokens) * 1000) / ratePerSecond);
}

/** Requests per second per class, for one instance across the whole gateway. */
export type ClassRates = Readonly<Record<RequestClass, number>>;

interface InstanceBuckets {
  read: TokenBucket;
  write: TokenBucket;
  query: TokenBucket;
}

/**
 * Per instance and class, this replica's share of the free rates. Replicas share nothing: each
 * admits rate / replicas (see docs/free-envelope.md for why, and what it costs), so the whole
 * gateway admits at most the rate while the Service spreads requests evenly, and never more
 * whatever the spread. A bucket holds one second of its rate (at least one request): a burst of
 * that size passes, then requests are admitted at the rate. A hit costs a map lookup and
 * arithmetic: nothing is allocated but an instance's buckets, once.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, InstanceBuckets>();
  private readonly perReplica: ClassRates;
  private readonly burst: ClassRates;

  constructor(
    rates: ClassRates,
    replicas: number,
    private readonly now: () => number = Date.now,
  ) {
    const share = (rate: number): number => rate / replicas;
    this.perReplica = { read: share(rates.read), write: share(rates.write), query: share(rates.query) };
    const burst = (rate: number): number => Math.max(1, share(rate));
    this.burst = { read: burst(rates.read), write: burst(rates.write), query: burst(rates.query) };
  }

  /** 0 when the request may pass, else the milliseconds until it would. */
  take(instanceKey: string, requestClass: RequestClass): number {
    const now = this.now();
    let buckets = this.buckets.get(instanceKey);
    if (buckets === undefined) {
      buckets = {
        read: { tokens: this.burst.read, updatedAt: now },
        write: { tokens: this.burst.write, updatedAt: now },
        query: { tokens: this.burst.query, updatedAt: now },
      };
      this.buckets.set(instanceKey, buckets);
    }
    return takeToken(buckets[requestClass], this.perReplica[requestClass], this.burst[requestClass], now);
  }

  /**
   * Returns a token take() gave for a request that was then not sent (the fast path handed it to
   * the full path, which takes its own): the tenant pays once per request. Capped at the burst.
   */
  giveBack(instanceKey: string, requestClass: RequestClass): void {
    const bucket = this.buckets.get(instanceKey)?.[requestClass];
    if (bucket !== undefined) bucket.tokens = Math.min(this.burst[requestClass], bucket.tokens + 1);
  }

  /** The instance was deleted (or became paid): what is kept stays bounded by the free instances. */
  forget(instanceKey: string): void {
    this.buckets.delete(instanceKey);
  }
}
