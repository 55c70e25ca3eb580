import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { waitFor } from '../../../local/wait.js';
import { snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';
import { useScheduleTicks } from '../../helpers/queue/schedule-ticks.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';
import { expectErrorAnswers, type ErrorAnswerCase } from '../../helpers/queue/error-answers.js';

/**
 * The binding's schedule quota and the schedule API's refusals through the unchanged SDK, with two
 * gateway replicas on one database (the ticks themselves: sdk-schedules.test.ts).
 */
describe('schedule quotas and refusals with the @upstash/qstash SDK, two gateway replicas', () => {
  // spec.limits.maxSchedules 20 rather than the free plan's 10: the racing test needs 20.
  const suite = useSdkQueueSuite({ limits: { maxSchedules: 20 } });
  const { ticksOf, makeTickDue, settle } = useScheduleTicks(suite);
  const keys = queueKeys(suite.config.keyPrefix);

  it('when both replicas race to create schedules past the binding quota, then exactly the quota is created (412 for the rest), and each tick of each fires exactly once', async () => {
    const created = await Promise.allSettled(
      Array.from({ length: 23 }, (_, i) =>
        quietly(() =>
          suite.client(i % 2).schedules.create({
            destination: `${suite.receiver.baseUrl}/many/${i}`,
            cron: '0 0 1 1 *',
          }),
        ),
      ),
    );
    const ids = created.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(ids).toHaveLength(20);
    for (const outcome of created.filter((o) => o.status === 'rejected'))
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        status: 412,
        message: expect.stringMatching(
          /schedule limit reached: the binding has its most active schedules \(20, QueueBinding spec.limits.maxSchedules\)/,
        ),
      });
    expect(await suite.inspect.hlen(keys.schedules)).toBe(20);
    // At the quota, an existing schedule is still replaced in place by its id.
    await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/many/replaced`,
      cron: '0 0 1 1 *',
      scheduleId: ids[0]!.scheduleId,
    });
    expect(await suite.inspect.hlen(keys.schedules)).toBe(20);
    for (let round = 0; round < 5; round += 1) {
      await Promise.all(ids.map(({ scheduleId }) => makeTickDue(scheduleId)));
      // Every schedule's tick has fired before the next round makes it due again: made due while
      // still claimed, it would fire once for both rounds.
      await waitFor(
        `round ${round} of ticks`,
        async () => ids.every(({ scheduleId }) => ticksOf(scheduleId) > round) || undefined,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
    }
    await settle();
    for (const { scheduleId } of ids) expect(ticksOf(scheduleId)).toBe(5);
    expect(new Set(suite.receiver.deliveries.map((d) => d.headers['upstash-message-id'])).size).toBe(100);
  });

  it('when schedules are paused, then they do not count toward the quota; resuming one past it is a 412 naming the quota, and updating it keeps it paused', async () => {
    const create = (i: number | string, scheduleId?: string) =>
      suite.client(Number(i) % 2 || 0).schedules.create({
        destination: `${suite.receiver.baseUrl}/active/${i}`,
        cron: '0 0 1 1 *',
        ...(scheduleId === undefined ? {} : { scheduleId }),
      });
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push((await create(i)).scheduleId);
    await suite.client().schedules.pause({ schedule: ids[0]! });
    // Paused, the first no longer counts: one more fits, and then the quota is reached again.
    const extra = await create('extra');
    await expect(quietly(() => create('over'))).rejects.toMatchObject({ status: 412 });
    await expect(
      quietly(() => suite.client(1).schedules.resume({ schedule: ids[0]! })),
    ).rejects.toMatchObject({
      status: 412,
      message: expect.stringContaining(
        'schedule limit reached: the binding has its most active schedules (20, QueueBinding spec.limits.maxSchedules); pause or delete one first',
      ),
    });
    expect((await suite.client().schedules.get(ids[0]!)).isPaused).toBe(true);
    // Updated by its id, the paused schedule takes the new settings and stays paused.
    await create('updated', ids[0]);
    const updated = await suite.client().schedules.get(ids[0]!);
    expect(updated).toMatchObject({
      destination: `${suite.receiver.baseUrl}/active/updated`,
      isPaused: true,
    });
    expect(updated.nextScheduleTime).toBeUndefined();
    expect(await suite.inspect.zcard(keys.scheduleTicks)).toBe(20);
    // Deleting an active one makes room to resume it.
    await suite.client().schedules.delete(extra.scheduleId);
    await suite.client(1).schedules.resume({ schedule: ids[0]! });
    expect((await suite.client().schedules.get(ids[0]!)).isPaused).toBe(false);
    expect(await suite.inspect.zcard(keys.scheduleTicks)).toBe(20);
    expect(await suite.inspect.hlen(keys.schedules)).toBe(20);
  });

  it('when the cron, its time zone, the id, the destination or a header is bad, then it is a 400 naming it and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(suite.inspect);
    const create = (destination: string, headers: Record<string, string>) =>
      fetch(`${suite.replicas[0]!.queueUrl(suite.target)}/v2/schedules/${destination}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${suite.target.token}`, ...headers },
        body: 'x',
      });
    const url = `${suite.receiver.baseUrl}/bad`;
    const cases: ErrorAnswerCase[] = [
      [create(url, {}), 400, /Upstash-Cron is missing/],
      [create(url, { 'Upstash-Cron': '* * * *' }), 400, /Upstash-Cron "\* \* \* \*" must have five fields/],
      [create(url, { 'Upstash-Cron': '*/10 * * * * *' }), 400, /five fields/],
      [create(url, { 'Upstash-Cron': '99 * * * *' }), 400, /Upstash-Cron "99 \* \* \* \*": Constraint error/],
      [
        create(url, { 'Upstash-Cron': 'CRON_TZ=Nowhere/City 0 * * * *' }),
        400,
        /CRON_TZ=Nowhere\/City is not a known time zone/,
      ],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Schedule-Id': 'has space' }),
        400,
        /Upstash-Schedule-Id "has space"/,
      ],
      [create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Retries': 'many' }), 400, /Upstash-Retries/],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Queue-Name': 'a/b' }),
        400,
        /Upstash-Queue-Name "a\/b" may contain only/,
      ],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Queue-Name': 'q', 'Upstash-Delay': '8d' }),
        400,
        /Upstash-Delay 8d is longer than the queue's maximum delay of 7d/,
      ],
      [create('http://169.254.169.254/latest', { 'Upstash-Cron': '* * * * *' }), 400, /linkLocal/],
      [create('ftp://files.example/x', { 'Upstash-Cron': '* * * * *' }), 400, /only http and https/],
      [create('no-such-group', { 'Upstash-Cron': '* * * * *' }), 404, /url group no-such-group not found/],
      [
        fetch(`${suite.replicas[0]!.queueUrl(suite.target)}/v2/schedules/scd_x`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${suite.target.token}` },
        }),
        405,
        /method not allowed: this route takes GET, DELETE, POST/,
      ],
    ];
    await expectErrorAnswers(cases);
    expect(await snapshotDatabase(suite.inspect)).toEqual(snapshot);
  });

  it("when another tenant's token is used, then the schedule API answers 401; its own binding shows none of these", async () => {
    const { scheduleId } = await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/mine`,
      cron: '0 0 * * *',
    });
    await expect(
      quietly(() => suite.client(0, suite.otherTarget.token).schedules.get(scheduleId)),
    ).rejects.toThrow(/invalid token/);
    await expect(
      quietly(() => suite.client(0, suite.otherTarget.token).schedules.delete(scheduleId)),
    ).rejects.toThrow(/invalid token/);
    const other = queueSdkClient(suite.replicas[0]!, suite.otherTarget);
    expect(await other.schedules.list()).toEqual([]);
    await expect(quietly(() => other.schedules.get(scheduleId))).rejects.toThrow(/not found/);
    expect((await suite.client().schedules.get(scheduleId)).scheduleId).toBe(scheduleId);
  });
});
