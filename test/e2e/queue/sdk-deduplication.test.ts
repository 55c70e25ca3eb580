import type { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

const KEY_PREFIX = '{dedup-test}:';
const SHORT_WINDOW_MS = 400;

interface PublishAnswer {
  messageId: string;
  deduplicated?: boolean;
}

/**
 * Upstash-Deduplication-Id and Upstash-Content-Based-Deduplication through the unchanged SDK, on
 * two gateway replicas sharing one Redis: a duplicate is answered with the first message's id and
 * `deduplicated: true`, and the destination sees the message once.
 */
describe('deduplication with the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateways: TestQueueGateway[];
  let destination: RecordingDestination;
  let target: QueueTarget;
  let shortWindow: QueueTarget;
  let inspect: Redis;

  const client = (gateway = gateways[0]!, of = target): Client => queueSdkClient(gateway, of);

  beforeAll(async () => {
    redis = await startRedis();
    target = testQueueTarget(redis);
    shortWindow = testQueueTarget(redis, {
      name: 'short',
      db: 1,
      limits: { deduplicationWindowMs: SHORT_WINDOW_MS },
    });
    destination = await startRecordingDestination();
    inspect = connectTestRedis(redis);
    const config = testQueueConfig({ keyPrefix: KEY_PREFIX });
    gateways = await Promise.all([
      startTestQueueGateway({ config, targets: [target, shortWindow] }),
      startTestQueueGateway({
        config: { ...config, consumerName: `${config.consumerName}-b` },
        targets: [target, shortWindow],
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all((gateways ?? []).map((g) => g.stop()));
    await destination?.close();
    inspect?.disconnect();
    await redis?.stop();
  });

  /** Waits for `messageId`'s delivery, then a while longer, and returns every delivery of it. */
  async function deliveriesOf(messageId: string) {
    await waitFor(
      `delivery of ${messageId}`,
      async () => (destination.attemptsOf(messageId).length > 0 ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    return destination.attemptsOf(messageId);
  }

  it('when a message is published twice with one deduplicationId, then the second answers the first’s id with deduplicated and nothing more is delivered', async () => {
    const publish = () =>
      client().publishJSON({
        url: `${destination.baseUrl}/orders`,
        body: { order: 1 },
        deduplicationId: 'order-1',
      }) as Promise<PublishAnswer>;
    const first = await publish();
    const second = await publish();
    expect(first.deduplicated).toBeUndefined();
    expect(second).toEqual({ messageId: first.messageId, deduplicated: true });
    // Another body under the same id is a duplicate too: the id is what the publisher named.
    const third = (await client().publishJSON({
      url: `${destination.baseUrl}/orders`,
      body: { order: 'changed' },
      deduplicationId: 'order-1',
    })) as PublishAnswer;
    expect(third.messageId).toBe(first.messageId);
    expect(await deliveriesOf(first.messageId)).toHaveLength(1);
    expect(destination.requests.filter((r) => r.path === '/orders')).toHaveLength(1);
  });

  it('when a duplicate is published over plain HTTP, then it is answered 202 Accepted, as QStash does', async () => {
    const publish = () =>
      fetch(`${gateways[0]!.queueUrl(target)}/v2/publish/${destination.baseUrl}/raw`, {
        method: 'POST',
        headers: { authorization: `Bearer ${target.token}`, 'upstash-deduplication-id': 'raw-1' },
        body: 'x',
      });
    const first = await publish();
    const second = await publish();
    expect(first.status).toBe(201);
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ ...((await first.json()) as object), deduplicated: true });
  });

  it('when contentBasedDeduplication is on, then equal messages are one, and a different body, destination or header is another', async () => {
    const publish = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      client().publishJSON({
        url: `${destination.baseUrl}${path}`,
        body,
        headers,
        contentBasedDeduplication: true,
      }) as Promise<PublishAnswer>;
    const first = await publish('/content', { n: 1 }, { 'X-Tenant': 'a' });
    expect(await publish('/content', { n: 1 }, { 'X-Tenant': 'a' })).toEqual({
      messageId: first.messageId,
      deduplicated: true,
    });
    const others = [
      await publish('/content', { n: 2 }, { 'X-Tenant': 'a' }),
      await publish('/content-2', { n: 1 }, { 'X-Tenant': 'a' }),
      await publish('/content', { n: 1 }, { 'X-Tenant': 'b' }),
    ];
    expect(new Set([first, ...others].map((a) => a.messageId)).size).toBe(4);
    expect(others.every((a) => a.deduplicated === undefined)).toBe(true);
  });

  it('when 20 duplicates are published at once through two gateway replicas, then exactly one is stored and delivered, and all answer its id', async () => {
    const answers = (await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client(gateways[i % 2]!).publishJSON({
          url: `${destination.baseUrl}/concurrent`,
          body: { i },
          deduplicationId: 'concurrent-1',
        }),
      ),
    )) as PublishAnswer[];
    const ids = new Set(answers.map((a) => a.messageId));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => !a.deduplicated)).toHaveLength(1);
    const [messageId] = [...ids];
    expect(await deliveriesOf(messageId!)).toHaveLength(1);
  });

  it('when a batch repeats a deduplicationId, then each duplicate item answers the first’s id and the other items are stored', async () => {
    const earlier = (await client().publishJSON({
      url: `${destination.baseUrl}/batch`,
      body: { n: 0 },
      deduplicationId: 'batch-earlier',
    })) as PublishAnswer;
    const answers = (await client().batchJSON([
      { url: `${destination.baseUrl}/batch`, body: { n: 1 }, deduplicationId: 'batch-1' },
      { url: `${destination.baseUrl}/batch`, body: { n: 2 }, deduplicationId: 'batch-1' },
      { url: `${destination.baseUrl}/batch`, body: { n: 3 }, deduplicationId: 'batch-earlier' },
      { url: `${destination.baseUrl}/batch`, body: { n: 4 }, contentBasedDeduplication: true },
      { url: `${destination.baseUrl}/batch`, body: { n: 4 }, contentBasedDeduplication: true },
    ])) as PublishAnswer[];
    expect(answers[0]!.deduplicated).toBeUndefined();
    expect(answers[1]).toEqual({ messageId: answers[0]!.messageId, deduplicated: true });
    expect(answers[2]).toEqual({ messageId: earlier.messageId, deduplicated: true });
    expect(answers[3]!.deduplicated).toBeUndefined();
    expect(answers[4]).toEqual({ messageId: answers[3]!.messageId, deduplicated: true });
    for (const id of [earlier.messageId, answers[0]!.messageId, answers[3]!.messageId])
      expect(await deliveriesOf(id)).toHaveLength(1);
  });

  it('when a schedule is created twice with one Upstash-Deduplication-Id (through two replicas at once), then one schedule exists and both answers name it', async () => {
    const create = (gateway: TestQueueGateway, headers: Record<string, string>) =>
      client(gateway).schedules.create({
        destination: `${destination.baseUrl}/scheduled`,
        cron: '0 0 1 1 *',
        body: 'nightly',
        headers,
      });
    const answers = await Promise.all([
      create(gateways[0]!, { 'Upstash-Deduplication-Id': 'nightly-once' }),
      create(gateways[1]!, { 'Upstash-Deduplication-Id': 'nightly-once' }),
    ]);
    expect(answers[1]!.scheduleId).toBe(answers[0]!.scheduleId);
    const byContent = { 'Upstash-Content-Based-Deduplication': 'true' };
    const first = await create(gateways[0]!, byContent);
    expect((await create(gateways[1]!, byContent)).scheduleId).toBe(first.scheduleId);
    // The cron is part of the content: another cron is another schedule.
    const other = await client().schedules.create({
      destination: `${destination.baseUrl}/scheduled`,
      cron: '0 0 2 1 *',
      body: 'nightly',
      headers: byContent,
    });
    expect(other.scheduleId).not.toBe(first.scheduleId);
    const ids = (await client().schedules.list()).map((s) => s.scheduleId).sort();
    expect(ids).toEqual([answers[0]!.scheduleId, first.scheduleId, other.scheduleId].sort());
    for (const id of ids) await client().schedules.delete(id);
  });

  it('when the binding’s deduplication window has passed, then the same id publishes a new message, and expired keys are forgotten', async () => {
    const publish = () =>
      client(gateways[0], shortWindow).publishJSON({
        url: `${destination.baseUrl}/window`,
        body: {},
        deduplicationId: 'window-1',
      }) as Promise<PublishAnswer>;
    const first = await publish();
    expect((await publish()).messageId).toBe(first.messageId);
    await new Promise((resolve) => setTimeout(resolve, SHORT_WINDOW_MS + 100));
    const later = await publish();
    expect(later.messageId).not.toBe(first.messageId);
    expect(later.deduplicated).toBeUndefined();
    const shortKeys = queueKeys(KEY_PREFIX);
    const db1 = connectTestRedis(redis, 1);
    try {
      // The second window's key only: the first one's was trimmed by the later publish.
      expect(await db1.hlen(shortKeys.deduplicationIds)).toBe(1);
      expect(await db1.zcard(shortKeys.deduplicationExpiries)).toBe(1);
    } finally {
      db1.disconnect();
    }
  });

  it.each([
    [{ 'Upstash-Content-Based-Deduplication': 'maybe' }, /Upstash-Content-Based-Deduplication \\*"maybe/],
    [{ 'Upstash-Deduplication-Id': 'x'.repeat(1_001) }, /Upstash-Deduplication-Id is longer than 1000/],
  ])(
    'when a publish sends %j, then it answers 400 naming the header and stores nothing',
    async (headers, message) => {
      const before = await snapshotDatabase(inspect);
      await expect(
        quietly(() => client().publishJSON({ url: `${destination.baseUrl}/never`, body: {}, headers })),
      ).rejects.toThrow(message);
      expect(await snapshotDatabase(inspect)).toEqual(before);
    },
  );
});
