import { Client, QstashDailyRatelimitError, QstashRatelimitError, type QstashError } from '@upstash/qstash';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { quietly } from '../../helpers/queue/quietly.js';

/**
 * A binding's rate limits (spec.limits.maxMessagesPerDay, maxRequestsPerSecond; the free plan's
 * 1,000 messages a day is the unit test's) answered as QStash answers them, 429 with the headers
 * the SDK reads into its rate-limit errors, on two gateway replicas that share one count, while
 * another tenant's binding is untouched.
 */
describe("a binding's rate limits, through the @upstash/qstash SDK", () => {
  let redis: RedisServer;
  let destination: RecordingDestination;
  let daily: QueueTarget;
  let burst: QueueTarget;
  let refunded: QueueTarget;
  let other: QueueTarget;
  let stepped: QueueTarget;
  let gateway: TestQueueGateway;
  let replica: TestQueueGateway;
  const config = testQueueConfig();
  const keys = queueKeys(config.keyPrefix);

  const client = (target: QueueTarget, via = gateway): Client =>
    new Client({ baseUrl: via.queueUrl(target), token: target.token, retry: false, enableTelemetry: false });
  const refusal = async (call: () => Promise<unknown>): Promise<QstashError> =>
    quietly(call).then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: unknown) => e as QstashError,
    );

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    // Tenants' bindings are databases of their own: here three numbered databases of one server.
    daily = testQueueTarget(redis, {
      namespace: 'a',
      name: 'daily',
      db: 1,
      limits: { maxMessagesPerDay: 3 },
    });
    burst = testQueueTarget(redis, {
      namespace: 'a',
      name: 'burst',
      db: 2,
      limits: { maxRequestsPerSecond: 1 },
    });
    other = testQueueTarget(redis, { namespace: 'b', name: 'other', db: 3 });
    refunded = testQueueTarget(redis, {
      namespace: 'a',
      name: 'refunded',
      db: 4,
      limits: { maxMessagesPerDay: 3, maxQueues: 1 },
    });
    stepped = testQueueTarget(redis, {
      namespace: 'a',
      name: 'stepped',
      db: 5,
      limits: { maxMessagesPerDay: 3 },
    });
    const targets = [daily, burst, other, refunded, stepped];
    gateway = await startTestQueueGateway({ config, targets });
    replica = await startTestQueueGateway({
      config: { ...config, consumerName: `${config.consumerName}-b` },
      targets,
    });
  });

  afterAll(async () => {
    await replica?.stop();
    await gateway?.stop();
    await destination?.close();
    await redis?.stop();
  });

  it('when a binding has published its messages of the day across two replicas, then a publish, an enqueue and a batch are 429 with RateLimit headers and store nothing, and another binding still publishes', async () => {
    const url = `${destination.baseUrl}/hooks/daily`;
    // Delayed a day, so every stored message is still there to count at the end.
    await client(daily).publishJSON({ url, body: { n: 1 }, delay: '1d' });
    await client(daily, replica).publishJSON({ url, body: { n: 2 }, delay: '1d' });
    // A batch of two does not fit into the one message left: refused whole.
    const batch = await refusal(() =>
      client(daily).batchJSON([
        { url, body: { n: 3 }, delay: '1d' },
        { url, body: { n: 4 }, delay: '1d' },
      ]),
    );
    expect(batch).toBeInstanceOf(QstashDailyRatelimitError);
    expect(batch).toMatchObject({ status: 429, limit: '3', remaining: '1' });
    await client(daily, replica).publishJSON({ url, body: { n: 5 }, delay: '1d' });

    const publish = await refusal(() => client(daily).publishJSON({ url, body: { n: 6 }, delay: '1d' }));
    expect(publish).toBeInstanceOf(QstashDailyRatelimitError);
    const reset = Number((publish as QstashDailyRatelimitError).reset);
    const tomorrow = Math.ceil(Date.now() / 86_400_000) * 86_400;
    expect(reset).toBe(tomorrow);
    const enqueue = await refusal(() =>
      client(daily, replica)
        .queue({ queueName: 'q' })
        .enqueueJSON({ url, body: { n: 7 }, delay: '1d' }),
    );
    expect(enqueue).toBeInstanceOf(QstashDailyRatelimitError);

    // The raw answer: QStash's error shape and Retry-After.
    const raw = await fetch(`${gateway.queueUrl(daily)}/v2/publish/${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${daily.token}` },
      body: 'x',
    });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(raw.headers.get('ratelimit-remaining')).toBe('0');
    expect(((await raw.json()) as { error: string }).error).toMatch(/spec\.limits\.maxMessagesPerDay/);

    // Stored: the three that fit, waiting for their delay, and no queue made by the refused enqueue.
    const db = new Redis({ host: redis.host, port: redis.port, password: redis.password, db: 1 });
    try {
      expect(await db.hlen(keys.scheduledMessages)).toBe(3);
      expect(await db.hlen(keys.queues)).toBe(0);
    } finally {
      db.disconnect();
    }

    // Another tenant's binding: its own count, far from spent.
    for (let n = 0; n < 10; n++)
      await expect(client(other).publishJSON({ url, body: { n }, delay: '1d' })).resolves.toHaveProperty(
        'messageId',
      );
  });

  it('when publishes are refused after the count (a queue over maxQueues, a batch item so refused) or are duplicates, then the daily count in Redis is given their share back, and the day still takes its full count of new messages', async () => {
    const url = `${destination.baseUrl}/hooks/refunded`;
    const db = new Redis({ host: redis.host, port: redis.port, password: redis.password, db: 4 });
    const used = async (): Promise<number> => Number(await db.hget(keys.dailyMessages, 'used'));
    try {
      await client(refunded)
        .queue({ queueName: 'first' })
        .enqueueJSON({ url, body: { n: 1 }, delay: '1d' });
      expect(await used()).toBe(1);
      // A second queue is over the binding's maxQueues of one: 412, nothing stored, nothing spent.
      const overQuota = await refusal(() =>
        client(refunded, replica)
          .queue({ queueName: 'second' })
          .enqueueJSON({ url, body: { n: 2 }, delay: '1d' }),
      );
      expect(overQuota).toMatchObject({ status: 412 });
      expect(await used()).toBe(1);
      // A batch: its item into a second queue is refused in its place, the plain one stored.
      const items = await client(refunded).batchJSON([
        { url, body: { n: 3 }, delay: '1d', queueName: 'second' },
        { url, body: { n: 4 }, delay: '1d', deduplicationId: 'once' },
      ]);
      expect(items[0]).toHaveProperty('error');
      expect(items[1]).toHaveProperty('messageId');
      expect(await used()).toBe(2);
      // A duplicate stores nothing new (202): not counted either.
      const again = await client(refunded, replica).publishJSON({
        url,
        body: { n: 4 },
        delay: '1d',
        deduplicationId: 'once',
      });
      expect(again).toMatchObject({
        messageId: (items[1] as { messageId: string }).messageId,
        deduplicated: true,
      });
      expect(await used()).toBe(2);

      // The day's third new message fits; the fourth does not.
      await client(refunded).publishJSON({ url, body: { n: 5 }, delay: '1d' });
      expect(await used()).toBe(3);
      expect(
        await refusal(() => client(refunded).publishJSON({ url, body: { n: 6 }, delay: '1d' })),
      ).toBeInstanceOf(QstashDailyRatelimitError);
      expect(await db.hlen(keys.scheduledMessages)).toBe(3);
      expect(await used()).toBe(3);
    } finally {
      db.disconnect();
    }
  });

  it("when a workflow run's steps are published, through the replica that started the run (stored with their append) or another, then each one stays counted for the day", async () => {
    const url = `${destination.baseUrl}/hooks/stepped`;
    const db = new Redis({ host: redis.host, port: redis.port, password: redis.password, db: 5 });
    const used = async (): Promise<number> => Number(await db.hget(keys.dailyMessages, 'used'));
    // As the workflow SDK publishes them: raw Upstash-Workflow-* headers; delayed, so none is sent.
    const publish = (via: TestQueueGateway, init: boolean) =>
      fetch(`${via.queueUrl(stepped)}/v2/publish/${url}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stepped.token}`,
          'upstash-workflow-runid': 'wfr_counted',
          'upstash-workflow-url': url,
          'upstash-workflow-init': String(init),
          'upstash-delay': '1d',
        },
        body: JSON.stringify({ stepId: init ? 0 : 1, out: 'x' }),
      });
    try {
      expect((await publish(gateway, true)).status).toBe(201);
      expect(await used()).toBe(1);
      expect((await publish(gateway, false)).status).toBe(201);
      expect(await used()).toBe(2);
      expect((await publish(replica, false)).status).toBe(201);
      expect(await used()).toBe(3);
      expect((await publish(gateway, false)).status).toBe(429);
      expect(await db.hlen(keys.scheduledMessages)).toBe(3);
    } finally {
      db.disconnect();
    }
  });

  it('when requests to a binding with a limit of one a second come together, then the extra ones are 429 with Burst-RateLimit headers, and another binding is never refused', async () => {
    const results = await quietly(() =>
      Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => client(burst, i % 2 ? replica : gateway).urlGroups.list()),
      ),
    );
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as QstashError] : []));
    // At most one request a second passes, whichever replica it reached: 12 requests sent at
    // once cannot all pass unless they are spread over 12 seconds.
    expect(refused.length).toBeGreaterThan(0);
    expect(results.length - refused.length).toBeGreaterThan(0);
    for (const err of refused) {
      expect(err).toBeInstanceOf(QstashRatelimitError);
      expect(err).toMatchObject({ status: 429, limit: '1', remaining: '0' });
    }
    const others = await Promise.allSettled(Array.from({ length: 12 }, () => client(other).urlGroups.list()));
    expect(others.filter((r) => r.status === 'rejected')).toEqual([]);
  });
});
