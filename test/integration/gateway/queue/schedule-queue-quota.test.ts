import type { QueueTarget } from '../../../../gateway/queue/core/binding-registry.js';
import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { QueueStore } from '../../../../gateway/queue/stores/queue-store.js';
import type { ScheduleRecord } from '../../../../gateway/queue/core/schedule.js';
import { ScheduleStore } from '../../../../gateway/queue/stores/schedule-store.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { testMessage } from '../../../helpers/queue/store-fixture.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';
import { setTimeout as sleep } from 'node:timers/promises';

const keys = queueKeys('{t}:');
const MINUTE = 60_000;
const NEXT_TICK = (Math.floor(Date.now() / MINUTE) + 10) * MINUTE;
const MAX_QUEUES = 2;
const MAX_SCHEDULES = 5;
const QUEUE_LIMIT_REACHED = `queue limit reached: the binding has its most queues (${MAX_QUEUES}, QueueBinding spec.limits.maxQueues); delete one first`;
/** Loopback (the test SSRF allowlist); nothing is delivered: the gateway below runs no workers. */
const DESTINATION = 'http://127.0.0.1:9/hook';

/**
 * A schedule naming a queue that does not exist is refused while the binding has its most queues
 * (spec.limits.maxQueues): checked by the save script in the same step as the save
 * (save-schedule.ts), on a real Redis, from two replicas' connections and through the API.
 */
describe('a schedule into a missing queue is checked against the queue quota by its save script', () => {
  const db = useGatewayRedis();
  /** One schedule store and one queue store per replica, each replica on its own connection. */
  let replicas: { schedules: ScheduleStore; queues: QueueStore }[];

  const record = (scheduleId: string): ScheduleRecord => ({
    scheduleId,
    cron: '0 0 1 1 *',
    destination: DESTINATION,
    createdAt: 1,
    isPaused: false,
  });
  const intoQueue = (queueName: string) =>
    createMessage({
      destination: DESTINATION,
      method: 'POST',
      headers: {},
      body: Buffer.from('tick'),
      retries: 0,
      queueName,
    });
  const save = (
    replica: number,
    scheduleId: string,
    queueName: string,
    deduplication?: { key: string; windowMs: number },
  ) =>
    replicas[replica]!.schedules.save(record(scheduleId), intoQueue(queueName), {
      nextTick: NEXT_TICK,
      maxSchedules: MAX_SCHEDULES,
      maxQueues: MAX_QUEUES,
      deduplication,
    });
  const createQueue = (replica: number, name: string) =>
    replicas[replica]!.queues.upsert(
      name,
      { parallelism: 1, create: true },
      { maxQueues: MAX_QUEUES, maxParallelism: 10 },
    );

  beforeAll(() => {
    replicas = [db.redis, db.connect()].map((connection) => ({
      schedules: new ScheduleStore(connection, keys),
      queues: new QueueStore(connection, keys),
    }));
  });
  beforeEach(() => db.inspect.flushdb());

  it("when its queue is missing and the binding has its most queues, then the save is refused with the queues' 412 and stores nothing; an existing queue or a free place lets it in, and the queue waits for the first tick", async () => {
    await createQueue(0, 'a');
    await createQueue(0, 'b');

    const refused = await save(1, 'into-c', 'c', { key: 'schedule:d1', windowMs: 60_000 }).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect((refused as QuotaExceededError).status).toBe(412);
    expect((refused as QuotaExceededError).message).toBe(QUEUE_LIMIT_REACHED);
    expect(await db.inspect.hlen(keys.schedules)).toBe(0);
    expect(await db.inspect.hlen(keys.scheduleMessages)).toBe(0);
    expect(await db.inspect.zcard(keys.scheduleTicks)).toBe(0);
    // A refused create holds no deduplication key: the same create is taken once there is room.
    expect(await db.inspect.hlen(keys.deduplicationIds)).toBe(0);

    await expect(save(1, 'into-a', 'a')).resolves.toEqual({ created: true });
    await replicas[0]!.queues.delete('b');
    await expect(save(1, 'into-c', 'c', { key: 'schedule:d1', windowMs: 60_000 })).resolves.toEqual({
      created: true,
    });
    expect((await replicas[0]!.schedules.get('into-c'))?.template.queueName).toBe('c');
    expect(await db.inspect.hexists(keys.queues, 'c')).toBe(0);
  });

  it('when schedule creates into a queue race with the enqueues that create that queue, from two replicas at the last free place, then every create succeeds', async () => {
    await createQueue(0, 'filler');
    // The queue is either missing with a place free or already there whichever goes first: never
    // missing with no place. A check that read the existence and the count apart could see both.
    for (let round = 0; round < 100; round += 1) {
      const name = `race-${round}`;
      const [saved] = await Promise.all([
        save(round % 2, `s-${round}`, name),
        replicas[(round + 1) % 2]!.queues.enqueue(name, [testMessage(`m${round}`, { queueName: name })], {
          deduplicationWindowMs: 0,
          quota: { maxQueues: MAX_QUEUES, maxParallelism: 10 },
        }),
      ]);
      expect(saved).toEqual({ created: true });
      await replicas[0]!.schedules.delete(`s-${round}`);
      await replicas[0]!.queues.delete(name);
    }
    expect(await db.inspect.hkeys(keys.queues)).toEqual(['filler']);
  });

  it('when a schedule names no queue, then it needs no queue quota; naming one without it is a programming error, refused before Redis', async () => {
    await createQueue(0, 'a');
    await createQueue(0, 'b');
    const plain = createMessage({
      destination: DESTINATION,
      method: 'POST',
      headers: {},
      body: Buffer.from(''),
      retries: 0,
    });
    await expect(
      replicas[0]!.schedules.save(record('plain'), plain, {
        nextTick: NEXT_TICK,
        maxSchedules: MAX_SCHEDULES,
      }),
    ).resolves.toEqual({ created: true });
    await expect(
      replicas[0]!.schedules.save(record('no-quota'), intoQueue('c'), {
        nextTick: NEXT_TICK,
        maxSchedules: MAX_SCHEDULES,
      }),
    ).rejects.toThrow('schedule no-quota names queue c: its save needs maxQueues');
  });

  it('when a deduplication key is still recorded but its window has ended, then a create with it is checked against the quotas as a new one', async () => {
    await createQueue(0, 'a');
    for (let i = 0; i < MAX_SCHEDULES; i += 1) await save(0, `s${i}`, 'a');
    await replicas[0]!.schedules.delete('s0');
    await save(0, 's0', 'a', { key: 'schedule:short', windowMs: 1 });
    // The window ends 1 ms after the create by the server's clock; no create has forgotten it yet.
    await sleep(20);
    expect(await db.inspect.hexists(keys.deduplicationIds, 'schedule:short')).toBe(1);

    await expect(save(1, 'over', 'a', { key: 'schedule:short', windowMs: 60_000 })).rejects.toThrow(
      /^schedule limit reached: the binding has its most active schedules \(5,/,
    );
    expect(await db.inspect.hexists(keys.schedules, 'over')).toBe(0);
    expect(await db.inspect.zcard(keys.scheduleTicks)).toBe(MAX_SCHEDULES);
  });

  describe('through the API', () => {
    const config = testQueueConfig();
    const gatewayKeys = queueKeys(config.keyPrefix);
    let gateway: TestQueueGateway;
    let target: QueueTarget;

    beforeAll(async () => {
      target = testQueueTarget(db.server, { limits: { maxQueues: MAX_QUEUES } });
      gateway = await startTestQueueGateway({ config, targets: [target], workers: false });
    });
    afterAll(() => gateway?.stop());

    const call = (path: string, init: { method: string; headers?: Record<string, string>; body?: string }) =>
      fetch(`${gateway.queueUrl(target)}/v2/${path}`, {
        ...init,
        headers: { authorization: `Bearer ${target.token}`, ...init.headers },
      });
    const createSchedule = (queueName: string, deduplicationId: string) =>
      call(`schedules/${DESTINATION}`, {
        method: 'POST',
        headers: {
          'upstash-cron': '0 0 1 1 *',
          'upstash-queue-name': queueName,
          'upstash-deduplication-id': deduplicationId,
        },
        body: 'tick',
      });

    it("when a create repeats an earlier create's deduplication id after its queue can no longer be created, then it answers the earlier schedule's id as any duplicate does, and a new create gets the 412", async () => {
      const first = await createSchedule('later', 'create-once');
      expect(first.status).toBe(200);
      const { scheduleId } = (await first.json()) as { scheduleId: string };
      for (const queueName of ['q1', 'q2']) {
        const created = await call('queues', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ queueName, parallelism: 1 }),
        });
        expect(created.status).toBe(200);
      }

      // A client retrying a create that went through (its answer lost) gets its schedule back.
      const retried = await createSchedule('later', 'create-once');
      expect(retried.status).toBe(200);
      expect(await retried.json()).toEqual({ scheduleId });
      const another = await createSchedule('later', 'another');
      expect(another.status).toBe(412);
      expect(await another.json()).toEqual({ error: QUEUE_LIMIT_REACHED });
      expect(await db.inspect.hkeys(gatewayKeys.schedules)).toEqual([scheduleId]);
    });
  });
});
