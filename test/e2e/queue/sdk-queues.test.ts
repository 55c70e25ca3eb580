import { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { sendOrderEvents } from '../../../examples/queues/order-events.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/bindings/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import {
  startTestReceiver,
  type RecordedDelivery,
  type TestReceiver,
} from '../../helpers/queue/test-receiver.js';
import { quietly } from '../../helpers/queue/quietly.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Queues (`client.queue({queueName}).*`) through the unchanged SDK, with two gateway replicas on
 * one database: QStash's shapes, in-order delivery, at most `parallelism` deliveries at once
 * across both replicas, retries and dead letters holding and freeing their slot, pause, delete,
 * bad input, quotas and another binding's token.
 */
describe('queues with the @upstash/qstash SDK across two gateway replicas', () => {
  const config = testQueueConfig();
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;
  /** Deliveries being answered right now, and the most there ever were at once. */
  let inFlight = 0;
  let mostInFlight = 0;

  const client = (replica = 0, token = target.token): Client =>
    new Client({
      baseUrl: replicas[replica]!.queueUrl(target),
      token,
      retry: false,
      enableTelemetry: false,
    });

  /** Answers each delivery after `holdMs`, counting how many are held at once. */
  function holdDeliveries(holdMs: number, status: (d: RecordedDelivery) => number = () => 200): void {
    receiver.respond = async (delivery) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await sleep(holdMs);
      inFlight -= 1;
      return status(delivery);
    };
  }

  const bodies = () => receiver.deliveries.map((d) => d.body.toString());

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'cache',
      signingKey,
      limits: { maxQueues: 4, maxQueueParallelism: 8 },
    });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    // Two replicas: each its own consumer in the group, sharing the database's slot counts.
    replicas = await Promise.all(
      ['replica-a', 'replica-b'].map((consumerName) =>
        startTestQueueGateway({
          config: testQueueConfig({ consumerName }),
          targets: [target, otherTarget],
        }),
      ),
    );
  });

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(async () => {
    // A delivery still held by the previous test would count down after the reset below.
    await waitFor('no delivery held', async () => inFlight === 0 || undefined, { timeoutMs: 5_000 });
    receiver.deliveries.length = 0;
    receiver.respond = () => 200;
    inFlight = 0;
    mostInFlight = 0;
    for (const queue of await client().queue().list())
      await client().queue({ queueName: queue.name }).delete();
  });

  const delivered = (count: number, timeoutMs = 20_000) =>
    waitFor(`${count} deliveries`, async () => receiver.deliveries.length >= count || undefined, {
      timeoutMs,
      intervalMs: 20,
    });

  it("when a queue is upserted, read, listed, paused, resumed and deleted, then the SDK sees QStash's shapes at each step", async () => {
    const before = Date.now();
    const queue = client().queue({ queueName: 'orders' });
    await queue.upsert({ parallelism: 2 });
    const created = await queue.get();
    expect(created).toEqual({
      name: 'orders',
      parallelism: 2,
      paused: false,
      lag: 0,
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(created.createdAt).toBeGreaterThanOrEqual(before);
    // The other replica answers from the same database.
    expect(await client(1).queue().list()).toEqual([created]);

    await queue.pause();
    expect((await queue.get()).paused).toBe(true);
    await queue.resume();
    expect((await queue.get()).paused).toBe(false);
    // The SDK's upsert sends parallelism 1 unless told: QStash sets both fields.
    await queue.upsert({ paused: true });
    const paused = await queue.get();
    expect(paused).toMatchObject({ paused: true, parallelism: 1, createdAt: created.createdAt });
    await client().queue({ queueName: 'audit' }).upsert({ parallelism: 1 });
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['audit', 'orders']);

    await queue.delete();
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['audit']);
    await expect(quietly(() => queue.get())).rejects.toThrow(/queue orders not found/);
    await expect(quietly(() => queue.pause())).rejects.toThrow(/queue orders not found/);
    // QStash answers 200 for a queue that does not exist.
    await expect(queue.delete()).resolves.toBeUndefined();
  });

  it('when messages are enqueued through both replicas into a queue of parallelism 1, then they are delivered one at a time in enqueue order', async () => {
    holdDeliveries(40);
    const sent: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const body = `order-${i}`;
      // enqueueJSON creates the queue on the first call (parallelism 1).
      const answer = await client(i % 2)
        .queue({ queueName: 'fifo' })
        .enqueueJSON({ url: `${receiver.baseUrl}/orders`, body });
      expect(answer).toEqual({ messageId: expect.stringMatching(/^msg_/) });
      sent.push(JSON.stringify(body));
    }
    await delivered(12);
    expect(bodies()).toEqual(sent);
    expect(mostInFlight).toBe(1);
    expect(await client().queue({ queueName: 'fifo' }).get()).toMatchObject({ parallelism: 1, lag: 0 });
    // The last slot goes back once its delivery is recorded, just after the receiver answered.
    await waitFor(
      'the slot of the last message back',
      async () => (await inspect.scard(queueKeys(config.keyPrefix).queueActive('fifo'))) === 0 || undefined,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
  });

  it('when a queue has parallelism 3, then both replicas together never deliver more than 3 of its messages at once', async () => {
    await client().queue({ queueName: 'wide' }).upsert({ parallelism: 3 });
    holdDeliveries(150);
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        client(i % 2)
          .queue({ queueName: 'wide' })
          .enqueue({ url: `${receiver.baseUrl}/wide`, body: `w-${String(i).padStart(2, '0')}` }),
      ),
    );
    expect(new Set(answers.map((a) => a.messageId)).size).toBe(15);
    await delivered(15);
    expect(mostInFlight).toBe(3);
    expect(bodies().sort()).toEqual(Array.from({ length: 15 }, (_, i) => `w-${String(i).padStart(2, '0')}`));
  });

  it('when messages are enqueued with Upstash-Delay or Upstash-Not-Before, then each is delivered no earlier than its time, and later ones wait behind it in the queue order', async () => {
    const queue = client().queue({ queueName: 'later' });
    await queue.upsert({ parallelism: 2 });
    const start = Date.now();
    const first = await queue.enqueue({ url: `${receiver.baseUrl}/later`, body: 'first', delay: 2 });
    await client(1)
      .queue({ queueName: 'later' })
      .enqueue({ url: `${receiver.baseUrl}/later`, body: 'second' });
    const notBefore = Math.ceil(start / 1000) + 3;
    const [third] = await client(1).batch([
      { queueName: 'later', url: `${receiver.baseUrl}/later`, body: 'third', notBefore },
    ]);
    // Waiting: in the queue's lag, and the messages API shows when it is due.
    expect((await queue.get()).lag).toBe(3);
    expect((await client().messages.get(first.messageId)).notBefore).toBeGreaterThanOrEqual(start + 2_000);
    expect((await client().messages.get((third as { messageId: string }).messageId)).notBefore).toBe(
      notBefore * 1000,
    );
    await sleep(1_000);
    expect(receiver.deliveries).toHaveLength(0);
    await delivered(3);
    const at = new Map(receiver.deliveries.map((d) => [d.body.toString(), d.at]));
    expect([...at.keys()].sort()).toEqual(['first', 'second', 'third']);
    expect(at.get('first')).toBeGreaterThanOrEqual(start + 2_000);
    // The undelayed second message did not overtake the delayed first, though a slot was free: it
    // started with it. With parallelism 2 the two are then in flight together, so either may reach
    // the receiver first (seen under load), and their arrival order is not asserted.
    expect(at.get('second')).toBeGreaterThanOrEqual(start + 2_000);
    expect(at.get('third')).toBeGreaterThanOrEqual(notBefore * 1000);
    expect((await queue.get()).lag).toBe(0);
  }, 30_000);

  it('when a queued message has a callback, or a failure callback, then the next message of its queue waits until that callback is delivered, as on QStash', async () => {
    const queue = client().queue({ queueName: 'called-back' });
    const answeredAt: Record<string, number> = {};
    receiver.respond = async (delivery) => {
      const path = new URL(delivery.url).pathname;
      if (path !== '/work') {
        await sleep(800);
        answeredAt[path] = Date.now();
        return 200;
      }
      return delivery.body.toString() === 'fails' ? 500 : 200;
    };
    await queue.enqueue({
      url: `${receiver.baseUrl}/work`,
      body: 'first',
      callback: `${receiver.baseUrl}/callback`,
    });
    await queue.enqueue({
      url: `${receiver.baseUrl}/work`,
      body: 'fails',
      retries: 0,
      failureCallback: `${receiver.baseUrl}/failure-callback`,
    });
    await client(1)
      .queue({ queueName: 'called-back' })
      .enqueue({ url: `${receiver.baseUrl}/work`, body: 'last' });
    await delivered(5);
    const received = receiver.deliveries.map((d) => ({
      path: new URL(d.url).pathname,
      body: d.body.toString(),
      at: d.at,
    }));
    expect(received.map((r) => r.path)).toEqual([
      '/work',
      '/callback',
      '/work',
      '/failure-callback',
      '/work',
    ]);
    expect(received[2]!).toMatchObject({ body: 'fails' });
    expect(received[2]!.at).toBeGreaterThanOrEqual(answeredAt['/callback']!);
    expect(received[4]!).toMatchObject({ body: 'last' });
    expect(received[4]!.at).toBeGreaterThanOrEqual(answeredAt['/failure-callback']!);
    // The callbacks are not the queue's messages: they were not counted in its lag, nor filed under it.
    expect(
      (await client().logs({ filter: { queueName: 'called-back', state: 'CREATED' } })).logs,
    ).toHaveLength(3);
    const k = queueKeys(config.keyPrefix);
    await waitFor(
      'every slot given back',
      async () => (await inspect.scard(k.queueActive('called-back'))) === 0 || undefined,
      { timeoutMs: 5_000 },
    );
  }, 30_000);

  it('when a dead letter of a queued message is retried, then it goes back into its queue and waits there for a slot, and another tenant cannot retry it', async () => {
    const queue = client().queue({ queueName: 'second-chance' });
    receiver.respond = () => 500;
    const { messageId } = await queue.enqueue({
      url: `${receiver.baseUrl}/again`,
      body: 'again',
      retries: 0,
    });
    const letter = await waitFor(
      'the dead letter',
      async () => (await client().dlq.listMessages({ filter: { queueName: 'second-chance' } })).messages[0],
      { timeoutMs: 15_000 },
    );
    expect(letter.messageId).toBe(messageId);
    await expect(quietly(() => client(0, otherTarget.token).dlq.retry([letter.dlqId]))).rejects.toThrow(
      /invalid token/,
    );
    // The queue is busy: a slow message holds its only slot.
    holdDeliveries(1_500);
    await queue.enqueue({ url: `${receiver.baseUrl}/again`, body: 'busy' });
    await waitFor('the busy message held', async () => inFlight === 1 || undefined, { timeoutMs: 5_000 });
    const { responses } = await client(1).dlq.retry([letter.dlqId]);
    const retriedId = responses[0]!.messageId;
    expect(await client().messages.get(retriedId)).toMatchObject({ queueName: 'second-chance' });
    expect((await queue.get()).lag).toBe(1);
    await delivered(3);
    expect(bodies()).toEqual(['again', 'busy', 'again']);
    expect(receiver.deliveries[2]!.headers['upstash-message-id']).toBe(retriedId);
    expect(mostInFlight).toBe(1);
  }, 30_000);

  it('when a queued message fails, then its retries keep its slot, and a dead-lettered one frees it for the next', async () => {
    const queue = client().queue({ queueName: 'retrying' });
    let failures = 0;
    receiver.respond = (delivery) => {
      const body = delivery.body.toString();
      if (body === 'first' && failures === 0) {
        failures += 1;
        return 500;
      }
      return body === 'doomed' ? 500 : 200;
    };
    await queue.enqueue({ url: `${receiver.baseUrl}/r`, body: 'first', retries: 2 });
    await queue.enqueue({ url: `${receiver.baseUrl}/r`, body: 'doomed', retries: 0 });
    await queue.enqueue({ url: `${receiver.baseUrl}/r`, body: 'last' });
    await delivered(4);
    expect(bodies()).toEqual(['first', 'first', 'doomed', 'last']);
    expect(receiver.deliveries.map((d) => d.headers['upstash-retried'])).toEqual(['0', '1', '0', '0']);
    const dlq = await client().dlq.listMessages();
    expect(dlq.messages.map((m) => m.body)).toContain('doomed');
  });

  it('when a queue is paused, then its messages wait (readable, counted as lag) and go out in order once it is resumed', async () => {
    const queue = client().queue({ queueName: 'held' });
    await queue.upsert({ parallelism: 2, paused: true });
    const ids: string[] = [];
    for (const body of ['a', 'b', 'c'])
      ids.push((await queue.enqueue({ url: `${receiver.baseUrl}/h`, body })).messageId);
    await sleep(300);
    expect(receiver.deliveries).toHaveLength(0);
    expect((await queue.get()).lag).toBe(3);
    const waiting = await client(1).messages.get(ids[1]!);
    expect(waiting).toMatchObject({ messageId: ids[1], url: `${receiver.baseUrl}/h`, queueName: 'held' });

    await client(1).queue({ queueName: 'held' }).resume();
    await delivered(3);
    expect(bodies().sort()).toEqual(['a', 'b', 'c']);
    expect((await queue.get()).lag).toBe(0);
  });

  it('when a queue with waiting messages is deleted, then those messages are cancelled and never delivered', async () => {
    const queue = client().queue({ queueName: 'doomed-queue' });
    await queue.upsert({ parallelism: 1, paused: true });
    const { messageId } = await queue.enqueue({ url: `${receiver.baseUrl}/d`, body: 'never' });
    await queue.delete();
    await expect(quietly(() => client().messages.get(messageId))).rejects.toThrow(/not found/);
    const k = queueKeys(config.keyPrefix);
    expect(await inspect.exists(k.queueWaiting('doomed-queue'), k.queueActive('doomed-queue'))).toBe(0);
    expect(await inspect.hexists(k.scheduledMessages, messageId)).toBe(0);
    await sleep(300);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('when a queue request is bad or over the binding quota, then it is refused naming the field, and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(inspect);
    const queueUrl = `${replicas[0]!.queueUrl(target)}/v2/queues`;
    const post = (body: unknown) =>
      fetch(queueUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const cases: [unknown, number, RegExp][] = [
      [{ queueName: 'q', parallelism: 0 }, 400, /parallelism must be >= 1/],
      [{ queueName: 'q', parallelism: 1.5 }, 400, /parallelism must be integer/],
      [{ queueName: 'q', parallelism: 9 }, 400, /parallelism 9 is above the binding's limit of 8/],
      [{ queueName: 'a/b' }, 400, /queueName "a\/b" may contain only/],
      [{ queueName: 'x'.repeat(129) }, 400, /queueName is longer than 128/],
      [{ parallelism: 1 }, 400, /must have required property 'queueName'/],
      [{ queueName: 'q', colour: 'red' }, 400, /must NOT have additional properties/],
    ];
    for (const [body, status, message] of cases) {
      const response = await post(body);
      expect({
        body,
        status: response.status,
        error: ((await response.json()) as { error: string }).error,
      }).toEqual({
        body,
        status,
        error: expect.stringMatching(message),
      });
    }
    const enqueueTooLate = await quietly(() =>
      client()
        .queue({ queueName: 'q' })
        .enqueue({ url: `${receiver.baseUrl}/x`, body: 'x', delay: '8d' }),
    ).catch((err: Error) => err.message);
    expect(enqueueTooLate).toMatch(
      /Upstash-Delay 8d is longer than the queue's maximum delay of 7d \(QueueBinding spec.limits.maxDelay\)/,
    );
    const badName = await quietly(() =>
      client()
        .queue({ queueName: 'bad name' })
        .enqueue({ url: `${receiver.baseUrl}/x`, body: 'x' }),
    ).catch((err: Error) => err.message);
    expect(badName).toMatch(/queue name \\"bad name\\" may contain only letters, digits/);
    // The SDK puts a name holding "/" in the path unencoded: a 400 naming the field, not a 404.
    const slashed: (() => Promise<unknown>)[] = [
      () => client().queue({ queueName: 'a/b' }).get(),
      () => client().queue({ queueName: 'a/b' }).pause(),
      () => client().schedules.get('a/b'),
      () => client().schedules.resume({ schedule: 'a/b' }),
    ];
    for (const run of slashed)
      expect(
        await quietly(run).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      ).toMatch(/(queue name|schedule id) \\"a\/b\\" may contain only/);
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);

    for (const name of ['q1', 'q2', 'q3', 'q4'])
      await client().queue({ queueName: name }).upsert({ parallelism: 1 });
    const overQuota = await post({ queueName: 'q5', parallelism: 1 });
    expect(overQuota.status).toBe(412);
    expect(await overQuota.json()).toEqual({
      error: expect.stringMatching(/queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/),
    });
    const enqueueOver = await quietly(() =>
      client()
        .queue({ queueName: 'q5' })
        .enqueue({ url: `${receiver.baseUrl}/x`, body: 'x' }),
    ).catch((err: Error) => err.message);
    expect(enqueueOver).toMatch(/queue limit reached/);
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);

    // A batch is answered per item: the item whose queue cannot be created names the quota in its
    // place; the plain item and the existing queue's item are stored and delivered.
    const batch = await client().batchJSON([
      { url: `${receiver.baseUrl}/plain`, body: 'plain' },
      { url: `${receiver.baseUrl}/over`, body: 'over', queueName: 'q5' },
      { url: `${receiver.baseUrl}/q1`, body: 'q1', queueName: 'q1' },
    ]);
    expect(batch).toEqual([
      { messageId: expect.stringMatching(/^msg_/) },
      {
        error: expect.stringMatching(
          /^batch item 1: queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/,
        ),
      },
      { messageId: expect.stringMatching(/^msg_/) },
    ]);
    await delivered(2);
    await sleep(200);
    expect(
      bodies()
        .map((b) => JSON.parse(b) as string)
        .sort(),
    ).toEqual(['plain', 'q1']);
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);

    // A schedule into a queue that could not be created is refused at creation, nothing stored.
    const scheduleOver = await quietly(() =>
      client().schedules.create({ destination: `${receiver.baseUrl}/s`, cron: '0 0 1 1 *', queueName: 'q5' }),
    ).catch((err: Error) => err.message);
    expect(scheduleOver).toMatch(/queue limit reached.*\(4, QueueBinding spec.limits.maxQueues\)/);
    expect((await client().schedules.list()).filter((s) => s.queueName === 'q5')).toEqual([]);
  });

  it('when a schedule ticks into a missing queue while the binding has its most queues, then the tick is recorded with a FAILED event naming the quota, and no queue is created nor message stored', async () => {
    for (const name of ['q1', 'q2', 'q3'])
      await client().queue({ queueName: name }).upsert({ parallelism: 1 });
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/late`,
      cron: '0 0 1 1 *',
      queueName: 'late-queue',
      body: 'late',
    });
    // Another queue takes the last place after the schedule was created.
    await client().queue({ queueName: 'q4' }).upsert({ parallelism: 1 });
    const k = queueKeys(config.keyPrefix);
    await inspect.zadd(k.scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
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
    expect(Number(await inspect.hget(k.scheduleLastTicks, scheduleId))).toBeGreaterThan(0);
    expect(Number(await inspect.zscore(k.scheduleTicks, scheduleId))).toBeGreaterThan(Date.now());
    expect((await client().queue().list()).map((q) => q.name)).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect(await inspect.hlen(k.scheduledMessages)).toBe(0);
    await sleep(200);
    expect(receiver.deliveries).toHaveLength(0);
    await client().schedules.delete(scheduleId);
  });

  it("when another binding's token is used on this binding's queues, then every call is a 401 and nothing changes", async () => {
    await client().queue({ queueName: 'private' }).upsert({ parallelism: 1 });
    const snapshot = await snapshotDatabase(inspect);
    const intruder = client(0, otherTarget.token);
    const queue = intruder.queue({ queueName: 'private' });
    const calls: [string, () => Promise<unknown>][] = [
      ['upsert', () => queue.upsert({ parallelism: 5 })],
      ['get', () => queue.get()],
      ['list', () => queue.list()],
      ['pause', () => queue.pause()],
      ['resume', () => queue.resume()],
      ['delete', () => queue.delete()],
      ['enqueue', () => queue.enqueue({ url: `${receiver.baseUrl}/x`, body: 'x' })],
    ];
    for (const [name, call] of calls) {
      const outcome = await quietly(call).then(
        () => 'resolved',
        (err: Error) => err.message,
      );
      expect({ name, outcome }).toEqual({ name, outcome: expect.stringMatching(/401|Unauthorized|token/i) });
    }
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
  });

  it('when the queue example (examples/queues) runs twice, then the fulfilment service gets each order event in order and the queues are not duplicated', async () => {
    const endpoints = {
      fulfilment: `${receiver.baseUrl}/fulfilment`,
      invoices: `${receiver.baseUrl}/invoices`,
    };
    const events = [
      { orderId: 'o-1', status: 'created' },
      { orderId: 'o-1', status: 'paid' },
      { orderId: 'o-1', status: 'shipped' },
    ] as const;
    holdDeliveries(20);
    await sendOrderEvents(client(), endpoints, events);
    await sendOrderEvents(client(1), endpoints, events);
    await delivered(8);
    const fulfilment = receiver.deliveries.filter((d) => d.url.endsWith('/fulfilment'));
    expect(fulfilment.map((d) => JSON.parse(d.body.toString()).status)).toEqual([
      'created',
      'paid',
      'shipped',
      'created',
      'paid',
      'shipped',
    ]);
    expect(receiver.deliveries.filter((d) => d.url.endsWith('/invoices'))).toHaveLength(2);
    expect((await client().queue().list()).map((q) => [q.name, q.parallelism])).toEqual([
      ['invoices', 2],
      ['order-events', 1],
    ]);
  });

  it('when a batch holds items for two queues and one for no queue, then each queue gets its items in batch order and the plain one goes out at once', async () => {
    await client().queue({ queueName: 'batch-a' }).upsert({ parallelism: 1, paused: true });
    const answers = await client(1).batchJSON([
      { url: `${receiver.baseUrl}/a`, body: 'a1', queueName: 'batch-a' },
      { url: `${receiver.baseUrl}/b`, body: 'b1', queueName: 'batch-b' },
      { url: `${receiver.baseUrl}/plain`, body: 'plain' },
      { url: `${receiver.baseUrl}/a`, body: 'a2', queueName: 'batch-a' },
      { url: `${receiver.baseUrl}/b`, body: 'b2', queueName: 'batch-b' },
      { url: `${receiver.baseUrl}/a`, body: 'a3', queueName: 'bad name' },
    ]);
    expect(answers.slice(0, 5)).toEqual(
      Array.from({ length: 5 }, () => ({ messageId: expect.stringMatching(/^msg_/) })),
    );
    expect(answers[5]).toEqual({
      error: expect.stringMatching(/batch item 5: queue "bad name" may contain only/),
    });
    await delivered(3);
    // batch-a is paused: its items wait; batch-b was created by the batch (parallelism 1).
    expect(
      bodies()
        .map((b) => JSON.parse(b) as string)
        .sort(),
    ).toEqual(['b1', 'b2', 'plain']);
    expect(
      bodies()
        .filter((b) => b.includes('"b'))
        .map((b) => JSON.parse(b) as string),
    ).toEqual(['b1', 'b2']);
    expect((await client().queue({ queueName: 'batch-a' }).get()).lag).toBe(2);
    await client().queue({ queueName: 'batch-a' }).resume();
    await delivered(5);
    expect(
      bodies()
        .slice(3)
        .map((b) => JSON.parse(b) as string),
    ).toEqual(['a1', 'a2']);
  });

  it('when a schedule names a queue (Upstash-Queue-Name), then each tick is enqueued there: it waits while the queue is paused and carries the schedule id', async () => {
    await client().queue({ queueName: 'ticks' }).upsert({ parallelism: 1, paused: true });
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/tick`,
      cron: '0 0 1 1 *',
      queueName: 'ticks',
      body: 'tick',
    });
    expect(await client(1).schedules.get(scheduleId)).toMatchObject({ scheduleId, queueName: 'ticks' });
    const k = queueKeys(config.keyPrefix);
    await inspect.zadd(k.scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
    await waitFor(
      'the tick enqueued',
      async () => ((await client().queue({ queueName: 'ticks' }).get()).lag === 1 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    expect(receiver.deliveries).toHaveLength(0);
    await client().queue({ queueName: 'ticks' }).resume();
    await delivered(1);
    expect(receiver.deliveries[0]!.headers['upstash-schedule-id']).toBe(scheduleId);
    await client().schedules.delete(scheduleId);
  });

  it('when a schedule into a queue has Upstash-Delay, then each tick takes its place in the queue at once and is delivered no earlier than the delay after it', async () => {
    // Paused while the tick is stored, so that it is seen in its place however slow this machine
    // is; the resume then starts it at its due time (the resume's wake-up), not before.
    await client().queue({ queueName: 'ticks-later' }).upsert({ parallelism: 1, paused: true });
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/tick-later`,
      cron: '0 0 1 1 *',
      queueName: 'ticks-later',
      delay: 2,
      body: 'tick',
    });
    const k = queueKeys(config.keyPrefix);
    const tickedAt = Date.now();
    await inspect.zadd(k.scheduleTicks, 'XX', tickedAt - 1_000, scheduleId);
    await waitFor(
      'the tick enqueued',
      async () => ((await client().queue({ queueName: 'ticks-later' }).get()).lag === 1 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    await client()
      .queue({ queueName: 'ticks-later' })
      .enqueue({ url: `${receiver.baseUrl}/tick-later`, body: 'behind the tick' });
    await client().queue({ queueName: 'ticks-later' }).resume();
    await delivered(2);
    expect(bodies()).toEqual(['tick', 'behind the tick']);
    // The tick fired at its due time, at least a second ago; its delay counts from that time.
    expect(receiver.deliveries[0]!.at).toBeGreaterThanOrEqual(tickedAt - 1_000 + 2_000);
    expect(receiver.deliveries[0]!.headers['upstash-schedule-id']).toBe(scheduleId);
    await client().schedules.delete(scheduleId);
  });

  it('when messages are cancelled or dead letters listed by queueName, then only that queue’s are matched', async () => {
    await client().queue({ queueName: 'keep' }).upsert({ parallelism: 1, paused: true });
    await client().queue({ queueName: 'drop' }).upsert({ parallelism: 1, paused: true });
    const kept = await client()
      .queue({ queueName: 'keep' })
      .enqueue({ url: `${receiver.baseUrl}/k`, body: 'k' });
    for (const body of ['d1', 'd2'])
      await client()
        .queue({ queueName: 'drop' })
        .enqueue({ url: `${receiver.baseUrl}/d`, body });
    expect(await client().messages.cancel({ filter: { queueName: 'drop' } })).toEqual({ cancelled: 2 });
    expect(await client().messages.get(kept.messageId)).toMatchObject({ queueName: 'keep' });

    receiver.respond = () => 500;
    await client()
      .queue({ queueName: 'keep' })
      .enqueue({ url: `${receiver.baseUrl}/k`, body: 'fails', retries: 0 });
    await client().queue({ queueName: 'keep' }).resume();
    await waitFor(
      'a dead letter of queue keep',
      async () => {
        const page = await client().dlq.listMessages({ filter: { queueName: 'keep' } });
        return page.messages.length === 2 ? page.messages : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect((await client().dlq.listMessages({ filter: { queueName: 'drop' } })).messages).toHaveLength(0);
  });
});
