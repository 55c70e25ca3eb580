import { exponentialBackoffMs, type BackoffPolicy } from './backoff.js';
import type { ObjectKey } from './object-key.js';

/**
 * Decides how long a key waits before its next retry. `when` records one more failure of the
 * key and returns the delay; `forget` clears the key's history once it succeeds.
 */
export interface RateLimiter {
  when(key: ObjectKey): number;
  forget(key: ObjectKey): void;
  failures(key: ObjectKey): number;
}

/** Per-key exponential backoff: each key's delay doubles with its own consecutive failures. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failureCounts = new Map<ObjectKey, number>();

  constructor(private readonly policy: BackoffPolicy) {}

  when(key: ObjectKey): number {
    const failures = (this.failureCounts.get(key) ?? 0) + 1;
    this.failureCounts.set(key, failures);
    return exponentialBackoffMs(this.policy, failures);
  }

  forget(key: ObjectKey): void {
    this.failureCounts.delete(key);
  }

  failures(key: ObjectKey): number {
    return this.failureCounts.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. */
  ratePerSecond: number;
  /** Bucket size: how many retries may go at once before the rate applies. */
  burst: number;
  now?: () => number;
}

/**
 * An overall limit on retries of all keys together, so that when the API server fails every
 * reconcile at once, hundreds of keys do not retry in lockstep. Each call reserves a token and
 * returns how long until that token exists.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private updatedAt: number;
  private readonly now: () => number;

  constructor(private readonly options: TokenBucketOptions) {
    this.now = options.now ?? Date.now;
    this.tokens = options.burst;
    this.updatedAt = this.now();
  }

  when(): number {
    const now = this.now();
    this.tokens = Math.min(
      this.options.burst,
      this.tokens + ((now - this.updatedAt) / 1000) * this.options.ratePerSecond,
    );
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.options.ratePerSecond) * 1000);
  }

  forget(): void {}

  failures(): number {
    return 0;
  }
}

/** The longest delay any of its limiters asks for; failures are the most any of them counted. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: ObjectKey): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: ObjectKey): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  failures(key: ObjectKey): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.failures(key)));
  }
}

export interface DefaultRateLimiterOptions {
  backoff: BackoffPolicy;
  /** Defaults follow client-go's controller limiter: 10 retries/s, burst 100. */
  retriesPerSecond?: number;
  retryBurst?: number;
}

export function buildDefaultRateLimiter(options: DefaultRateLimiterOptions): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialRateLimiter(options.backoff),
    new TokenBucketRateLimiter({
      ratePerSecond: options.retriesPerSecond ?? 10,
      burst: options.retryBurst ?? 100,
    }),
  );
}
