import { createSilentLogger } from '../../../../observability/logger.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { ScheduleStore } from '../../../../gateway/queue/stores/schedule-store.js';
import { ScheduleTicker } from '../../../../gateway/queue/workers/schedule-ticker.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { saveTestSchedule } from '../../../helpers/queue/store-fixture.js';

const keys = queueKeys('{t}:');
const MINUTE = 60_000;
/** A whole minute in the past, as cron ticks are, so the schedule's tick has come. */
const TICK = Math.floor(Date.now() / MINUTE) * MINUTE - 2 * MINUTE;

/**
 * A claim takes the place of the tick's time in the ticks set; when it runs out and another
 * replica claims the tick again, the tick must still fire as itself (lastScheduleTime is the cron
 * minute, not the claim): the claims hash keeps it (claim-schedule-ticks.ts). A dead replica's
 * claim is made to have run out by claiming "as of" a time just after the tick: its claim is then
 * already in the past, with no waiting.
 */
describe('a tick claimed again after its claim ran out fires as its own tick (real Redis)', () => {
  const db = useGatewayRedis();
  let store: ScheduleStore;

  const save = (scheduleId: string, nextTick: number) => saveTestSchedule(store, scheduleId, nextTick, 10);
  /** The surviving replica's ticker: it claims what has come by now and fires it. */
  const survivor = () =>
    new ScheduleTicker({
      redis: db.redis,
      keys,
      pollIntervalMs: 60_000,
      maxQueues: () => 10,
      logger: createSilentLogger(),
    });
  /** A replica that claims the due ticks as of `asOf` and dies: its claim holds until just after `asOf`. */
  const claimAndDie = (asOf: number) => store.claimDue(asOf, 10, asOf + 1);

  beforeAll(() => {
    store = new ScheduleStore(db.inspect, keys);
  });
  beforeEach(() => db.inspect.flushdb());

  it('when a replica dies holding a claimed tick, then the replica that claims it again fires it recording the tick, and no claim is left behind', async () => {
    await save('s0', TICK);
    const dead = await claimAndDie(TICK + 10);
    expect(dead.ticks).toEqual([{ scheduleId: 's0', tick: TICK }]);
    expect(Number(await db.inspect.zscore(keys.scheduleTicks, 's0'))).toBe(dead.claim);
    expect(dead.claim).not.toBe(TICK);

    expect(await survivor().fireDue()).toBe(1);
    expect(await db.inspect.hget(keys.scheduleLastTicks, 's0')).toBe(String(TICK));
    expect(await store.get('s0')).toMatchObject({ lastTick: TICK });
    expect(await db.inspect.hlen(keys.scheduleClaims)).toBe(0);
  });

  it('when a tick is claimed, then get and list report the tick as the next schedule time, not the claim, and a claim left behind by a replace counts for nothing', async () => {
    await save('claimed', TICK);
    await save('replaced', TICK);
    const dead = await claimAndDie(TICK + 10);
    expect(Number(await db.inspect.zscore(keys.scheduleTicks, 'claimed'))).toBe(dead.claim);
    expect(dead.claim).not.toBe(TICK);
    // Replaced while claimed: its score is the new tick, and the entry the claim left names TICK.
    await save('replaced', TICK + MINUTE);
    expect(await db.inspect.hlen(keys.scheduleClaims)).toBe(2);

    expect((await store.get('claimed'))?.nextTick).toBe(TICK);
    expect((await store.get('replaced'))?.nextTick).toBe(TICK + MINUTE);
    const listed = new Map((await store.list()).map((s) => [s.record.scheduleId, s.nextTick]));
    expect(listed).toEqual(
      new Map([
        ['claimed', TICK],
        ['replaced', TICK + MINUTE],
      ]),
    );
  });

  it('when a claim was renewed before its holder died, then the tick claimed again is still the tick', async () => {
    await save('s0', TICK);
    const dead = await claimAndDie(TICK + 10);
    expect(await store.renewClaim(['s0'], [dead.claim], TICK + 20)).toBe(1);
    // Claimed again by a second replica that dies too: the tick passes through two claims.
    expect((await claimAndDie(TICK + 30)).ticks).toEqual([{ scheduleId: 's0', tick: TICK }]);

    expect(await survivor().fireDue()).toBe(1);
    expect(await db.inspect.hget(keys.scheduleLastTicks, 's0')).toBe(String(TICK));
  });

  it('when a claimed schedule is replaced or paused and resumed before it fires, then its next claim is of the new tick, not the one the old claim kept', async () => {
    await save('replaced', TICK);
    await save('resumed', TICK);
    await claimAndDie(TICK + 10);
    // Both now tick a minute later; the entries the dead claim left name TICK.
    await save('replaced', TICK + MINUTE);
    await store.setPaused('resumed', true, { nextTick: TICK + MINUTE, maxSchedules: 10 });
    await store.setPaused('resumed', false, { nextTick: TICK + MINUTE, maxSchedules: 10 });
    expect(await db.inspect.hlen(keys.scheduleClaims)).toBe(2);

    expect(await survivor().fireDue()).toBe(2);
    expect(await db.inspect.hmget(keys.scheduleLastTicks, 'replaced', 'resumed')).toEqual([
      String(TICK + MINUTE),
      String(TICK + MINUTE),
    ]);
    expect(await db.inspect.hlen(keys.scheduleClaims)).toBe(0);
  });

  it('when a claimed schedule is deleted, then its claim entry goes with it', async () => {
    await save('s0', TICK);
    await claimAndDie(TICK + 10);
    expect(await db.inspect.hexists(keys.scheduleClaims, 's0')).toBe(1);
    expect(await store.delete('s0')).toBe(true);
    expect(await db.inspect.exists(keys.scheduleClaims)).toBe(0);
  });
});
