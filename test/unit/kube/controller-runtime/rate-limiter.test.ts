import { exponentialBackoffMs, jitteredMs } from '../../../../kube/controller-runtime/backoff.js';
import {
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
} from '../../../../kube/controller-runtime/rate-limiter.js';

describe('exponentialBackoffMs', () => {
  it('when failures grow, then the delay doubles from the base and is capped', () => {
    const policy = { baseMs: 100, maxMs: 1_000 };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => exponentialBackoffMs(policy, n))).toEqual([
      0, 100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it('when failures are huge, then the delay is the cap, not Infinity', () => {
    expect(exponentialBackoffMs({ baseMs: 5, maxMs: 60_000 }, 10_000)).toBe(60_000);
  });
});

describe('jitteredMs', () => {
  it('when jittered by half, then a delay falls between half of it and all of it, never past it', () => {
    expect([0, 0.5, 1].map((r) => jitteredMs(5_000, 0.5, () => r))).toEqual([5_000, 3_750, 2_500]);
  });
});

describe('ItemExponentialRateLimiter', () => {
  it('when two keys fail, then each backs off on its own count, and forgetting one resets only it', () => {
    const limiter = new ItemExponentialRateLimiter({ baseMs: 10, maxMs: 100 });
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([10, 20, 40]);
    expect(limiter.when('b')).toBe(10);
    limiter.forget('a');
    expect(limiter.failures('a')).toBe(0);
    expect(limiter.failures('b')).toBe(1);
    expect(limiter.when('a')).toBe(10);
    expect(limiter.when('b')).toBe(20);
  });
});

describe('TokenBucketRateLimiter', () => {
  it('when more retries come than the burst, then the extra ones wait for tokens at the rate', () => {
    let now = 1_000_000;
    const bucket = new TokenBucketRateLimiter({ ratePerSecond: 10, burst: 3, now: () => now });
    expect([bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0]);
    // Fourth and fifth: one and two tokens short, 100 ms per token.
    expect(bucket.when()).toBe(100);
    expect(bucket.when()).toBe(200);
    now += 1_000; // refills 10 tokens, but never beyond the burst, and repays the two borrowed
    expect([bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0]);
    expect(bucket.when()).toBe(100);
  });
});

describe('MaxOfRateLimiter', () => {
  it('when combined, then the longer of the per-key backoff and the bucket wait applies', () => {
    let now = 0;
    const limiter = new MaxOfRateLimiter(
      new ItemExponentialRateLimiter({ baseMs: 10, maxMs: 1_000 }),
      new TokenBucketRateLimiter({ ratePerSecond: 1, burst: 1, now: () => now }),
    );
    expect(limiter.when('a')).toBe(10); // bucket has a token; the key's backoff decides
    expect(limiter.when('b')).toBe(1_000); // bucket empty: one token per second
    now += 5_000;
    expect(limiter.when('a')).toBe(20);
    expect(limiter.failures('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.failures('a')).toBe(0);
  });
});
