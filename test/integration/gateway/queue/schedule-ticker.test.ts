import type { Redis } from 'ioredis';
import { waitFor } from '../../../../local/wait.js';
import { createSilentLogger } from '../../../../observability/logger.js';
import { MESSAGE_FIELD, queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { decodeMessage } from '../../../../gateway/queue/core/message-codec.js';
import { ScheduleStore, type TickToFire } from '../../../../gateway/queue/stores/schedule-store.js';
import { ScheduleTicker } from '../../../../gateway/queue/workers/schedule-ticker.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { saveTestSchedule } from '../../../helpers/queue/store-fixture.js';
import {
  failingNextFire,
  killedAfterClaim,
  slowLoads,
} from '../../../helpers/queue/ticker-connection-faults.js';
import { clearOfMinute } from '../../../helpers/clock-boundary.js';

const keys = queueKeys('{t}:');
const MINUTE = 60_000;
/** A whole minute in the past, as cron ticks are, so every schedule's tick has come. */
const TICK = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
/**
 * The claim a test's dead ticker holds: the steps before the claim runs out (another ticker
 * finding nothing, the dead one firing part of it, a few Redis calls) are assumed to take under
 * 1.5 s, which leaves a loaded machine over a second of slack.
 */
const DEAD_CLAIM_MS = 1_500;

/** Resolves just after `claim` (epoch ms) has run out. */
const claimRunOut = (claim: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, claim - Date.now()) + 50));

describe('the schedule tickers (claim and fire scripts, real Redis)', () => {
  const db = useGatewayRedis();
  /** One connection per replica, set up as the gateway's. */
  let replicas: Redis[];
  let store: ScheduleStore;

  const tickerOn = (connection: Redis, claimLeaseMs?: number) =>
    new ScheduleTicker({
      redis: connection,
      keys,
      pollIntervalMs: 60_000,
      maxQueues: () => 10,
      logger: createSilentLogger(),
      ...(claimLeaseMs === undefined ? {} : { claimLeaseMs }),
    });

  /** `count` schedules `s0`, `s1`, ... whose next tick is `tick`; returns their ids. */
  async function createSchedules(count: number, tick: number | undefined = TICK): Promise<string[]> {
    const ids = Array.from({ length: count }, (_, i) => `s${i}`);
    for (const scheduleId of ids) await saveTestSchedule(store, scheduleId, tick, count);
    return ids;
  }

  /** The schedule id of every message on the stream, one per stored message. */
  async function firedScheduleIds(): Promise<string[]> {
    const entries = await db.inspect.xrangeBuffer(keys.stream, '-', '+');
    return entries.map(([, fields]) => {
      const at = fields.findIndex((f) => f.toString() === MESSAGE_FIELD);
      return decodeMessage(fields[at + 1]!).scheduleId ?? '';
    });
  }

  const tickToFire = (scheduleId: string, tick: number): TickToFire => ({
    due: { scheduleId, tick },
    // After now, so a fired schedule is not due again within the test.
    following: tick + 10 * MINUTE,
    messages: [
      {
        ...createMessage({
          destination: 'https://example.com/hook',
          method: 'POST',
          headers: {},
          body: Buffer.from('{}'),
          retries: 0,
        }),
        scheduleId,
      },
    ],
  });

  beforeAll(() => {
    replicas = [db.redis, db.connect()];
    store = new ScheduleStore(db.inspect, keys);
  });
  beforeEach(() => db.inspect.flushdb());

  it('when two tickers fire 2,000 due ticks at once, then each tick fires once and both fire a share', async () => {
    const ids = await createSchedules(2_000);
    const [a, b] = replicas.map((connection) => tickerOn(connection));
    const [firedByA, firedByB] = await Promise.all([a!.fireDue(), b!.fireDue()]);

    expect(firedByA + firedByB).toBe(2_000);
    expect(firedByA).toBeGreaterThan(0);
    expect(firedByB).toBeGreaterThan(0);
    const fired = await firedScheduleIds();
    expect(fired).toHaveLength(2_000);
    expect(new Set(fired).size).toBe(2_000);
    // Every schedule moved on to a tick after now and recorded the one fired.
    const scores = await db.inspect.zrange(keys.scheduleTicks, '0', '-1', 'WITHSCORES');
    for (let i = 1; i < scores.length; i += 2) expect(Number(scores[i]) % MINUTE).toBe(0);
    expect(Number(scores[1])).toBeGreaterThan(Date.now() - MINUTE);
    expect(new Set(await db.inspect.hvals(keys.scheduleLastTicks))).toEqual(new Set([String(TICK)]));
    expect(await db.inspect.hlen(keys.scheduleLastTicks)).toBe(ids.length);
  });

  it('when ten minutes of ticks were missed while no ticker ran, then two tickers fire the schedule once and it ticks on from now', async () => {
    const missedSince = TICK - 10 * MINUTE;
    await createSchedules(1, missedSince);
    const [a, b] = replicas.map((connection) => tickerOn(connection));
    const now = Date.now();
    const [firedByA, firedByB] = await Promise.all([a!.fireDue(now), b!.fireDue(now)]);
    expect(firedByA + firedByB).toBe(1);
    // Rounds at the same time find nothing more: not one tick per missed minute.
    expect(await a!.fireDue(now)).toBe(0);
    expect(await b!.fireDue(now)).toBe(0);

    expect(await firedScheduleIds()).toEqual(['s0']);
    expect(await db.inspect.hget(keys.scheduleLastTicks, 's0')).toBe(String(missedSince));
    const next = Number(await db.inspect.zscore(keys.scheduleTicks, 's0'));
    expect(next % MINUTE).toBe(0);
    expect(next).toBeGreaterThan(now);
    expect(next - now).toBeLessThanOrEqual(MINUTE);
  });

  it('when a ticker dies between claiming ticks and firing them, then another fires them once after the claim runs out, and the dead one fires nothing late', async () => {
    await createSchedules(100);
    const dead = await store.claimDue(Date.now(), 1_000, Date.now() + DEAD_CLAIM_MS);
    expect(dead.ticks).toHaveLength(100);
    expect(dead.ticks[0]).toEqual({ scheduleId: expect.stringMatching(/^s\d+$/), tick: TICK });

    const survivor = tickerOn(replicas[1]!);
    expect(await survivor.fireDue()).toBe(0);
    await claimRunOut(dead.claim);
    expect(await survivor.fireDue()).toBe(100);

    const late = await store.fireClaimed(
      [dead.claim],
      '',
      dead.ticks.map((t) => tickToFire(t.scheduleId, t.tick)),
      10,
    );
    expect(late.filter(Boolean)).toHaveLength(0);
    const fired = await firedScheduleIds();
    expect(fired).toHaveLength(100);
    expect(new Set(fired).size).toBe(100);
  });

  it('when a ticker dies after firing part of its claim, then only the rest is fired by another, once', async () => {
    await createSchedules(200);
    const dead = await store.claimDue(Date.now(), 1_000, Date.now() + DEAD_CLAIM_MS);
    const firstPart = dead.ticks.slice(0, 50).map((t) => tickToFire(t.scheduleId, t.tick));
    expect((await store.fireClaimed([dead.claim], '', firstPart, 10)).every(Boolean)).toBe(true);

    await claimRunOut(dead.claim);
    expect(await tickerOn(replicas[0]!).fireDue()).toBe(150);
    const fired = await firedScheduleIds();
    expect(fired).toHaveLength(200);
    expect(new Set(fired).size).toBe(200);
  });

  it.each(['unsent', 'reply lost'] as const)(
    'when a fire fails mid-round (%s), then the next round fires the held claim at once, each tick once',
    async (how) => {
      await createSchedules(100);
      // A claim far longer than the test: only firing the held claim again can fire these ticks.
      const ticker = new ScheduleTicker({
        redis: failingNextFire(replicas[0]!, how),
        keys,
        pollIntervalMs: 60_000,
        claimLeaseMs: 60_000,
        maxQueues: () => 10,
        logger: createSilentLogger(),
      });
      // Every round runs as of one time: the ticks that follow on are whole minutes after it, so
      // a minute passing during the test cannot make them due (real time could).
      const asOf = Date.now();
      await expect(ticker.fireDue(asOf)).rejects.toThrow('Connection is closed.');
      const firedBefore = await db.inspect.xlen(keys.stream);

      expect(firedBefore + (await ticker.fireDue(asOf))).toBe(100);
      const fired = await firedScheduleIds();
      expect(fired).toHaveLength(100);
      expect(new Set(fired).size).toBe(100);
      expect(await ticker.fireDue(asOf)).toBe(0);
    },
  );

  it('when claimed schedules are paused, replaced or deleted before they fire, then the claim fires none of them', async () => {
    await createSchedules(3);
    const claimed = await store.claimDue(Date.now(), 10, Date.now() + 10_000);
    expect(claimed.ticks.map((t) => t.scheduleId).sort()).toEqual(['s0', 's1', 's2']);
    const next = TICK + 10 * MINUTE;
    await store.setPaused('s0', true, { nextTick: next, maxSchedules: 3 });
    const s1 = await store.get('s1');
    await store.save(s1!.record, s1!.template, { nextTick: next, maxSchedules: 3 });
    await store.delete('s2');

    const fired = await store.fireClaimed(
      [claimed.claim],
      '',
      claimed.ticks.map((t) => tickToFire(t.scheduleId, t.tick)),
      10,
    );
    expect(fired).toEqual([false, false, false]);
    expect(await db.inspect.xlen(keys.stream)).toBe(0);
    expect(await db.inspect.zscore(keys.scheduleTicks, 's0')).toBeNull();
    expect(await db.inspect.zscore(keys.scheduleTicks, 's1')).toBe(String(next));
  });

  it('when a round takes longer than the claim lease, then the ticker renews its claim and no other ticker fires its ticks meanwhile', async () => {
    // The other ticker's rounds run in real time (only real time shows the claim kept ahead of
    // it): should the slow round fire before the watch ends, a minute passing would make the
    // following ticks rightly due to them. The test takes about 5 s.
    await clearOfMinute(15_000);
    await createSchedules(100);
    // Renewed every third of the lease: a loaded machine's pause of a few hundred ms must not
    // let a renewal come after the lease ran out, which a lease of 300 ms would.
    const leaseMs = 1_000;
    const slow = new ScheduleTicker({
      redis: slowLoads(replicas[0]!, 4 * leaseMs),
      keys,
      pollIntervalMs: 60_000,
      claimLeaseMs: leaseMs,
      maxQueues: () => 10,
      logger: createSilentLogger(),
    });
    const other = tickerOn(replicas[1]!, 300);
    // The round fires as of this time and every schedule follows on with the first minute after
    // it. Checked as scores rather than by another round: a minute passing during the slow round
    // makes those following ticks due in real time, which is right, not a tick left unfired.
    const asOf = Date.now();
    const slowRound = slow.fireDue(asOf);
    const firstClaim = await waitFor(
      'the slow round claimed',
      async () => {
        const claim = Number(await db.inspect.zscore(keys.scheduleTicks, 's0'));
        return claim > TICK ? claim : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 5 },
    );
    // For more than three leases, the other ticker finds nothing due: the claim keeps moving on.
    const watchedFrom = Date.now();
    while (Date.now() - watchedFrom < 3 * leaseMs + 200) {
      expect(await other.fireDue()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Number(await db.inspect.zscore(keys.scheduleTicks, 's0'))).toBeGreaterThan(firstClaim + leaseMs);
    expect(await slowRound).toBe(100);
    const fired = await firedScheduleIds();
    expect(fired).toHaveLength(100);
    expect(new Set(fired).size).toBe(100);
    const following = Math.floor(asOf / MINUTE) * MINUTE + MINUTE;
    const scores = await db.inspect.zrange(keys.scheduleTicks, '0', '-1', 'WITHSCORES');
    expect(new Set(scores.filter((_, i) => i % 2 === 1))).toEqual(new Set([String(following)]));
    expect(await db.inspect.hlen(keys.scheduleClaims)).toBe(0);
  });

  it('when a ticker is killed holding a claim (default lease), then a running survivor fires its ticks once within about 2 s of the claim', async () => {
    // The survivor runs in real time until stopped and wakes for the following ticks, the first
    // minute after it fired: that minute passing before the stop would fire all 100 again,
    // rightly. The test takes about 3 s.
    await clearOfMinute(15_000);
    await createSchedules(100);
    const killed = killedAfterClaim(replicas[0]!);
    const dead = new ScheduleTicker({
      redis: killed.redis,
      keys,
      pollIntervalMs: 60_000,
      maxQueues: () => 10,
      logger: createSilentLogger(),
    });
    const claimedAt = Date.now();
    const deadRound = dead.fireDue().catch(() => undefined);
    await waitFor(
      'the dead ticker claimed',
      async () => (Number(await db.inspect.zscore(keys.scheduleTicks, 's0')) > TICK ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 5 },
    );
    const survivor = tickerOn(replicas[1]!);
    survivor.start();
    try {
      const allFired = await waitFor(
        'the survivor fired the ticks',
        async () => ((await db.inspect.xlen(keys.stream)) >= 100 ? Date.now() : undefined),
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      // Not before the dead claim ran out (2 s), and well before the old lease of 10 s would have
      // (the margin is wide for a loaded machine).
      expect(allFired - claimedAt).toBeGreaterThanOrEqual(1_900);
      expect(allFired - claimedAt).toBeLessThan(6_000);
    } finally {
      await survivor.stop();
      killed.release();
      await deadRound;
    }
    const fired = await firedScheduleIds();
    expect(fired).toHaveLength(100);
    expect(new Set(fired).size).toBe(100);
  });

  it('when a claim would land on a whole minute, then it is moved off it, so no cron tick can ever equal a claim', async () => {
    await createSchedules(1);
    const claimed = await store.claimDue(Date.now(), 10, TICK + 5 * MINUTE);
    expect(claimed.claim % MINUTE).not.toBe(0);
    expect(await db.inspect.zscore(keys.scheduleTicks, 's0')).toBe(String(claimed.claim));
    // Claimed ticks are not due for anyone else until the claim runs out.
    expect((await store.claimDue(Date.now(), 10, Date.now() + 1_000)).ticks).toEqual([]);
  });

  it('when the next tick is sooner than the poll interval, then a started ticker wakes for it rather than at the next poll', async () => {
    const ticker = tickerOn(replicas[0]!);
    const soon = Date.now() + 400;
    await createSchedules(1, soon);
    ticker.start();
    try {
      const fired = await waitFor(
        'the tick fired',
        async () => ((await db.inspect.xlen(keys.stream)) > 0 ? Date.now() : undefined),
        {
          timeoutMs: 10_000,
          intervalMs: 20,
        },
      );
      // The poll interval is a minute: only waking at the tick fires it this soon.
      expect(fired - soon).toBeLessThan(5_000);
      expect(fired).toBeGreaterThanOrEqual(soon);
    } finally {
      await ticker.stop();
    }
  });
});
