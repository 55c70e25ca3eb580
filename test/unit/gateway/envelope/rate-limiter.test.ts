import { RateLimiter, takeToken } from '../../../../gateway/envelope/rate-limiter.js';

describe('takeToken', () => {
  it('when the bucket has a token, then it is taken and nothing is to wait', () => {
    const bucket = { tokens: 2, updatedAt: 0 };
    expect(takeToken(bucket, 10, 10, 0)).toBe(0);
    expect(bucket.tokens).toBe(1);
  });

  it('when the bucket is empty, then the wait is until the next token and the bucket keeps its refill', () => {
    const bucket = { tokens: 0, updatedAt: 0 };
    expect(takeToken(bucket, 10, 10, 50)).toBe(50);
    expect(bucket.tokens).toBeCloseTo(0.5);
    expect(takeToken(bucket, 10, 10, 100)).toBe(0);
  });

  it('when the bucket has been idle long, then it refills to its burst and no further', () => {
    const bucket = { tokens: 0, updatedAt: 0 };
    expect(takeToken(bucket, 10, 10, 60_000)).toBe(0);
    expect(bucket.tokens).toBe(9);
  });

  it('when the clock goes back, then no tokens are made up', () => {
    const bucket = { tokens: 0.5, updatedAt: 1_000 };
    expect(takeToken(bucket, 10, 10, 500)).toBe(50);
    expect(bucket.updatedAt).toBe(1_000);
  });
});

describe('RateLimiter', () => {
  const rates = { read: 20, write: 10, query: 5 };

  it('when requests come faster than the rate for a second, then about the rate plus the burst pass', () => {
    let now = 0;
    const limiter = new RateLimiter(rates, 1, () => now);
    let passed = 0;
    // 100 writes a second for 2 s: a burst of 10, then 10 a second.
    for (let i = 0; i < 200; i++, now += 10) if (limiter.take('ns/a', 'write') === 0) passed++;
    expect(passed).toBeGreaterThanOrEqual(29);
    expect(passed).toBeLessThanOrEqual(31);
  });

  it('when the classes are used at once, then each has its own rate', () => {
    const limiter = new RateLimiter(rates, 1, () => 0);
    const count = (requestClass: 'read' | 'write' | 'query'): number =>
      Array.from({ length: 50 }, () => limiter.take('ns/a', requestClass)).filter((wait) => wait === 0)
        .length;
    expect([count('read'), count('write'), count('query')]).toEqual([20, 10, 5]);
  });

  it('when two instances are used, then neither spends the other’s tokens', () => {
    const limiter = new RateLimiter(rates, 1, () => 0);
    for (let i = 0; i < 5; i++) limiter.take('ns/a', 'query');
    expect(limiter.take('ns/a', 'query')).toBeGreaterThan(0);
    expect(limiter.take('ns/b', 'query')).toBe(0);
  });

  it('when there are 4 gateway replicas, then each admits a quarter of the rate', () => {
    let now = 0;
    const limiter = new RateLimiter(rates, 4, () => now);
    let passed = 0;
    for (let i = 0; i < 1000; i++, now += 10) if (limiter.take('ns/a', 'read') === 0) passed++;
    // 10 s at 5/s, with a burst of 5.
    expect(passed).toBeGreaterThanOrEqual(54);
    expect(passed).toBeLessThanOrEqual(56);
  });

  it('when an instance is forgotten, then it starts again with a full bucket', () => {
    const limiter = new RateLimiter(rates, 1, () => 0);
    for (let i = 0; i < 5; i++) limiter.take('ns/a', 'query');
    limiter.forget('ns/a');
    expect(limiter.take('ns/a', 'query')).toBe(0);
  });
});
