import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import type { ScheduleRecord } from '../../../../gateway/queue/core/schedule.js';
import { ScheduleStore } from '../../../../gateway/queue/stores/schedule-store.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

const keys = queueKeys('{t}:');
const MINUTE = 60_000;
const NEXT_TICK = (Math.floor(Date.now() / MINUTE) + 10) * MINUTE;
const QUOTA = 5;

/**
 * The schedule quota (spec.limits.maxSchedules) counts active schedules only, as QStash's plans
 * do: creates, resumes and replaces raced from two replicas' connections on a real Redis.
 */
describe('the schedule quota counts active schedules (save and pause scripts, real Redis)', () => {
  const db = useGatewayRedis();
  /** One store per replica, each on its own connection as the gateway's. */
  let replicas: ScheduleStore[];

  const record = (scheduleId: string, cron = '* * * * *'): ScheduleRecord => ({
    scheduleId,
    cron,
    destination: 'https://example.com/hook',
    createdAt: 1,
    isPaused: false,
  });
  const template = createMessage({
    destination: 'https://example.com/hook',
    method: 'POST',
    headers: {},
    body: Buffer.from('{}'),
    retries: 0,
  });
  const save = (replica: ScheduleStore, scheduleId: string, cron?: string) =>
    replica.save(record(scheduleId, cron), template, { nextTick: NEXT_TICK, maxSchedules: QUOTA });
  const setPaused = (replica: ScheduleStore, scheduleId: string, paused: boolean) =>
    replica.setPaused(scheduleId, paused, { nextTick: NEXT_TICK, maxSchedules: QUOTA });

  /** Ids whose record says paused, and ids in the ticks set; the two must never disagree. */
  async function pausedAndActive(): Promise<{ paused: string[]; active: string[] }> {
    const records = await db.inspect.hgetall(keys.schedules);
    const paused = Object.entries(records)
      .filter(([, json]) => (JSON.parse(json) as ScheduleRecord).isPaused)
      .map(([id]) => id)
      .sort();
    const active = (await db.inspect.zrange(keys.scheduleTicks, '0', '-1')).sort();
    expect([...paused, ...active].sort()).toEqual(Object.keys(records).sort());
    return { paused, active };
  }

  beforeAll(() => {
    replicas = [db.redis, db.connect()].map((connection) => new ScheduleStore(connection, keys));
  });
  beforeEach(() => db.inspect.flushdb());

  it('when schedules are paused, then racing creates on two replicas fill only the room the active ones leave, and the rest get the quota error', async () => {
    for (let i = 0; i < QUOTA; i += 1) await save(replicas[0]!, `old${i}`);
    await setPaused(replicas[0]!, 'old0', true);
    await setPaused(replicas[1]!, 'old1', true);

    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => save(replicas[i % 2]!, `new${i}`)),
    );
    const created = outcomes.filter((o) => o.status === 'fulfilled');
    expect(created).toHaveLength(2);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
      const reason = (outcome as PromiseRejectedResult).reason as QuotaExceededError;
      expect(reason).toBeInstanceOf(QuotaExceededError);
      expect(reason.status).toBe(412);
      expect(reason.message).toBe(
        `schedule limit reached: the binding has its most active schedules (${QUOTA}, QueueBinding spec.limits.maxSchedules); pause or delete one first`,
      );
    }
    const { paused, active } = await pausedAndActive();
    expect(paused).toEqual(['old0', 'old1']);
    expect(active).toHaveLength(QUOTA);
    // A refused create stored nothing: 5 active and 2 paused.
    expect(await db.inspect.hlen(keys.schedules)).toBe(QUOTA + 2);
    expect(await db.inspect.hlen(keys.scheduleMessages)).toBe(QUOTA + 2);
  });

  it('when two replicas race to resume paused schedules at the quota, then exactly the room is resumed and the rest stay paused with the quota error', async () => {
    for (let i = 0; i < QUOTA; i += 1) await save(replicas[0]!, `s${i}`);
    for (let i = 0; i < QUOTA; i += 1) await setPaused(replicas[0]!, `s${i}`, true);
    for (let i = 0; i < 3; i += 1) await save(replicas[0]!, `more${i}`);

    // Both replicas resume each of the five paused schedules at once: two fit.
    const outcomes = await Promise.allSettled(
      replicas.flatMap((replica) =>
        Array.from({ length: QUOTA }, (_, i) => setPaused(replica, `s${i}`, false)),
      ),
    );
    const rejected = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    for (const { reason } of rejected) expect(reason).toBeInstanceOf(QuotaExceededError);
    const { paused, active } = await pausedAndActive();
    expect(active).toHaveLength(QUOTA);
    expect(paused).toHaveLength(3);
    // A resume of a schedule that is already active changes nothing and is not refused.
    const resumedId = active.find((id) => id.startsWith('s'))!;
    await expect(setPaused(replicas[1]!, resumedId, false)).resolves.toBe(true);
    await expect(setPaused(replicas[1]!, paused[0]!, false)).rejects.toBeInstanceOf(QuotaExceededError);
    // Pausing one makes room for another.
    await setPaused(replicas[1]!, resumedId, true);
    await expect(setPaused(replicas[0]!, paused[0]!, false)).resolves.toBe(true);
    expect((await pausedAndActive()).active).toHaveLength(QUOTA);
    await expect(setPaused(replicas[0]!, 'missing', false)).resolves.toBe(false);
  });

  it('when a paused schedule is replaced by its id at the quota, then it is updated and stays paused; an active one is replaced in place', async () => {
    for (let i = 0; i < QUOTA; i += 1) await save(replicas[0]!, `s${i}`);
    await setPaused(replicas[0]!, 's0', true);
    await save(replicas[0]!, 'filler');

    await expect(save(replicas[1]!, 's0', '*/5 * * * *')).resolves.toEqual({ created: false });
    const replaced = await replicas[1]!.get('s0');
    expect(replaced).toMatchObject({ record: { cron: '*/5 * * * *', isPaused: true, createdAt: 1 } });
    expect(replaced!.nextTick).toBeUndefined();
    await expect(save(replicas[1]!, 's1', '*/5 * * * *')).resolves.toEqual({ created: false });
    expect(await replicas[1]!.get('s1')).toMatchObject({
      record: { cron: '*/5 * * * *', isPaused: false },
      nextTick: NEXT_TICK,
    });
    const { paused, active } = await pausedAndActive();
    expect(paused).toEqual(['s0']);
    expect(active).toHaveLength(QUOTA);
  });

  it('when two replicas replace one schedule at once, each with its own idea of createdAt, then the first createdAt stays (the script keeps it, no read outside it)', async () => {
    await replicas[0]!.save({ ...record('s0'), createdAt: 1_000 }, template, {
      nextTick: NEXT_TICK,
      maxSchedules: QUOTA,
    });
    // Each replica's replace carries the time it was asked, as a create does: neither read the old one.
    await Promise.all(
      [2_000, 3_000].map((createdAt, i) =>
        replicas[i]!.save({ ...record('s0', '*/5 * * * *'), createdAt }, template, {
          nextTick: NEXT_TICK,
          maxSchedules: QUOTA,
        }),
      ),
    );
    expect(await replicas[0]!.get('s0')).toMatchObject({
      record: { scheduleId: 's0', cron: '*/5 * * * *', createdAt: 1_000, isPaused: false },
      nextTick: NEXT_TICK,
    });
  });
});
