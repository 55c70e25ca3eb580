import type { Redis } from 'ioredis';
import { RateLimitedError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { RateLimits } from '../../../../gateway/queue/stores/rate-limits.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

const keys = queueKeys('{limits}:');
const burst = (limit: number) => ({ maxRequestsPerSecond: limit, maxMessagesPerDay: 0 });

/** Script calls the server has had so far (EVAL and EVALSHA, a NOSCRIPT retry's too). */
async function scriptRuns(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return ['eval', 'evalsha']
    .map((command) => Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0))
    .reduce((sum, calls) => sum + calls, 0);
}

/** Resolves just after the Redis server's clock starts a new second: a burst window's start. */
async function nextWindow(redis: Redis): Promise<void> {
  const [, micros] = await redis.time();
  await new Promise((resolve) => setTimeout(resolve, 1_000 - Number(micros) / 1_000 + 20));
}

const refusal = (promise: Promise<void>): Promise<RateLimitedError> =>
  promise.then(
    () => {
      throw new Error('taken, not refused');
    },
    (err: unknown) => {
      if (!(err instanceof RateLimitedError)) throw err;
      return err;
    },
  );

describe("a binding's burst limit against a real Redis", () => {
  const db = useGatewayRedis();

  beforeEach(async () => {
    await db.inspect.del(keys.burstRequests);
  });

  it('when a request is refused at the burst limit, then the rest of that window is refused with the same headers without running the script, and the first request after the window is taken', async () => {
    const limits = new RateLimits(db.redis, keys, burst(1));
    await nextWindow(db.inspect);
    await limits.takeRequest();
    const first = await refusal(limits.takeRequest());
    const runsBefore = await scriptRuns(db.inspect);
    const later: RateLimitedError[] = [];
    for (let i = 0; i < 20; i++)
      later.push(await refusal(new RateLimits(db.redis, keys, burst(1)).takeRequest()));

    expect(first.headers).toMatchObject({ 'Burst-RateLimit-Limit': '1', 'Burst-RateLimit-Remaining': '0' });
    for (const err of later) {
      expect(err.headers).toEqual(first.headers);
      expect(err.message).toBe(first.message);
    }
    expect(await scriptRuns(db.inspect)).toBe(runsBefore);

    const windowEndMs = Number(first.headers['Burst-RateLimit-Reset']) * 1_000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, windowEndMs - Date.now()) + 20));
    await expect(limits.takeRequest()).resolves.toBeUndefined();
  });

  it('when the limit is raised in a window another request was refused in, then the next request is counted against the new limit', async () => {
    await nextWindow(db.inspect);
    await new RateLimits(db.redis, keys, burst(1)).takeRequest();
    await refusal(new RateLimits(db.redis, keys, burst(1)).takeRequest());

    await expect(new RateLimits(db.redis, keys, burst(5)).takeRequest()).resolves.toBeUndefined();
    expect(await db.inspect.hget(keys.burstRequests, 'used')).toBe('2');
  });

  it("when one database's window is full, then another database's requests are still counted and taken", async () => {
    const other = db.connect();
    await other.select(1);
    await nextWindow(db.inspect);
    await new RateLimits(db.redis, keys, burst(1)).takeRequest();
    await refusal(new RateLimits(db.redis, keys, burst(1)).takeRequest());

    await expect(new RateLimits(other, keys, burst(1)).takeRequest()).resolves.toBeUndefined();
    await refusal(new RateLimits(other, keys, burst(1)).takeRequest());
  });
});
