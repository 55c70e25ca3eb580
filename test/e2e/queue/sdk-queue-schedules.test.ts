import { waitFor } from '../../../local/wait.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * Schedules that name a queue (Upstash-Queue-Name), through the unchanged SDK on two gateway
 * replicas: each tick is enqueued there, with its delay, and a tick into a queue the binding's
 * quota does not allow fails with an event instead of creating it.
 */
describe('schedules into queues with the @upstash/qstash SDK across two gateway replicas', () => {
  const suite = useSdkQueueSuite();
  const { config, client, bodies, delivered } = suite;

  it('when a schedule ticks into a missing queue while the binding has its most queues, then the tick is recorded with a FAILED event naming the quota, and no queue is created nor message stored', async () => {
    for (const name of ['q1', 'q2', 'q3'])
      await client().queue({ queueName: name }).upsert({ parallelism: 1 });
    const { scheduleId } = await client().schedules.create({
      destination: `${suite.receiver.baseUrl}/late`,
      cron: '0 0 1 1 *',
      queueName: 'late-queue',
      body: 'late',
    });
    // Another queue takes the last place after the schedule was created.
    await client().queue({ queueName: 'q4' }).upsert({ parallelism: 1 });
    const k = queueKeys(config.keyPrefix);
    await suite.inspect.zadd(k.scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
    const { events } = await waitFor(
      'the FAILED event',
      async () => {
        const answer = await client().events({ filter: { scheduleId } });
        return answer.events.length > 0 ? answer : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(events).toEqual([
      expect.objectContaining({
        state: 'FAILED',
        scheduleId,
        queueName: 'late-queue',
        error: expect.stringMatching(
          /queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\), so queue late-queue was not created/,
        ),
      }),
    ]);
    expect(Number(await suite.inspect.hget(k.scheduleLastTicks, scheduleId))).toBeGreaterThan(0);
    expect(Number(await suite.inspect.zscore(k.scheduleTicks, scheduleId))).toBeGreaterThan(Date.now());
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect(await suite.inspect.hlen(k.scheduledMessages)).toBe(0);
    await suite.deliveredPastThis();
    expect(suite.receiver.deliveries).toHaveLength(0);
    await client().schedules.delete(scheduleId);
  });

  it('when a schedule names a queue (Upstash-Queue-Name), then each tick is enqueued there: it waits while the queue is paused and carries the schedule id', async () => {
    await client().queue({ queueName: 'ticks' }).upsert({ parallelism: 1, paused: true });
    const { scheduleId } = await client().schedules.create({
      destination: `${suite.receiver.baseUrl}/tick`,
      cron: '0 0 1 1 *',
      queueName: 'ticks',
      body: 'tick',
    });
    expect(await client(1).schedules.get(scheduleId)).toMatchObject({ scheduleId, queueName: 'ticks' });
    const k = queueKeys(config.keyPrefix);
    await suite.inspect.zadd(k.scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
    await waitFor(
      'the tick enqueued',
      async () => ((await client().queue({ queueName: 'ticks' }).get()).lag === 1 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    expect(suite.receiver.deliveries).toHaveLength(0);
    await client().queue({ queueName: 'ticks' }).resume();
    await delivered(1);
    expect(suite.receiver.deliveries[0]!.headers['upstash-schedule-id']).toBe(scheduleId);
    await client().schedules.delete(scheduleId);
  });

  it('when a schedule into a queue has Upstash-Delay, then each tick takes its place in the queue at once and is delivered no earlier than the delay after it', async () => {
    // Paused while the tick is stored, so that it is seen in its place (the head of the waiting
    // list) whenever the ticker gets to it; the resume then starts it at its due time.
    await client().queue({ queueName: 'ticks-later' }).upsert({ parallelism: 1, paused: true });
    const delayMs = 5_000;
    const { scheduleId } = await client().schedules.create({
      destination: `${suite.receiver.baseUrl}/tick-later`,
      cron: '0 0 1 1 *',
      queueName: 'ticks-later',
      delay: delayMs / 1_000,
      body: 'tick',
    });
    const k = queueKeys(config.keyPrefix);
    const tickAt = Date.now() - 1_000;
    await suite.inspect.zadd(k.scheduleTicks, 'XX', tickAt, scheduleId);
    const tickId = await waitFor(
      'the tick enqueued',
      async () => (await suite.inspect.lrange(k.queueWaiting('ticks-later'), 0, 0))[0],
      { timeoutMs: 10_000, intervalMs: 10 },
    );
    const seenAt = Date.now();
    // The delay counts from the moment the ticker fired the tick: no earlier than the tick's time,
    // no later than when the tick was seen stored. Without the delay there is no notBefore at all.
    const { notBefore } = await client().messages.get(tickId);
    expect(notBefore).toBeGreaterThanOrEqual(tickAt + delayMs);
    expect(notBefore).toBeLessThanOrEqual(seenAt + delayMs);
    await client()
      .queue({ queueName: 'ticks-later' })
      .enqueue({ url: `${suite.receiver.baseUrl}/tick-later`, body: 'behind the tick' });
    await client().queue({ queueName: 'ticks-later' }).resume();
    await delivered(2);
    expect(bodies()).toEqual(['tick', 'behind the tick']);
    expect(suite.receiver.deliveries[0]!.at).toBeGreaterThanOrEqual(notBefore!);
    expect(suite.receiver.deliveries[0]!.headers['upstash-schedule-id']).toBe(scheduleId);
    await client().schedules.delete(scheduleId);
  });
});
