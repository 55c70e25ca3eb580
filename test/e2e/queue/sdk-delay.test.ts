import type { Client } from '@upstash/qstash';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/queue/test-receiver.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * The maintenance pass runs this rarely here, first this long after the gateway starts: never
 * while the suite runs (no test here needs it). Due messages are moved by the mover's own short
 * cadence (delivery-worker.ts, at most 250 ms whatever this interval), so any delivery at all of
 * a delayed message is the mover's; ON_TIME_MS then only bounds how late it may be.
 */
const POLL_INTERVAL_MS = 600_000;
/** Wide enough for a loaded CI machine to run the mover's timer late. */
const ON_TIME_MS = 3_000;

/**
 * Delayed delivery through the unchanged SDK: `delay` (Upstash-Delay) and `notBefore`
 * (Upstash-Not-Before) on publish and batch items, and the binding's delay limit.
 */
describe('delayed delivery with the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let receiver: TestReceiver;
  let target: QueueTarget;
  let limited: QueueTarget;

  const client = (of: QueueTarget = target): Client => queueSdkClient(gateway, of);

  beforeAll(async () => {
    redis = await startRedis();
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache', signingKey });
    limited = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'short',
      signingKey,
      db: 1,
      limits: { maxDelayMs: 3_600_000 },
    });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    gateway = await startTestQueueGateway({
      config: testQueueConfig({ pollIntervalMs: POLL_INTERVAL_MS }),
      targets: [target, limited],
    });
    gateway.startWorkers();
  });

  afterAll(async () => {
    await gateway?.stop();
    await receiver?.close();
    await redis?.stop();
  });

  const deliveryOf = (messageId: string) =>
    waitFor(
      `delivery of ${messageId}`,
      async () => receiver.deliveries.find((d) => d.headers['upstash-message-id'] === messageId),
      { timeoutMs: 10_000, intervalMs: 10 },
    );

  it('when publishJSON has a delay, then the message arrives after it, at its due time (moved by the mover, not the maintenance pass)', async () => {
    const publishedAt = Date.now();
    const { messageId } = await client().publishJSON({
      url: `${receiver.baseUrl}/hooks/delayed`,
      body: { n: 1 },
      delay: 2,
    });
    const delivery = await deliveryOf(messageId);
    const dueAt = publishedAt + 2_000;
    expect(delivery.at).toBeGreaterThanOrEqual(dueAt);
    expect(delivery.at - dueAt).toBeLessThan(ON_TIME_MS);
    expect(JSON.parse(delivery.body.toString('utf8'))).toEqual({ n: 1 });
  });

  it('when both notBefore and delay are set, then notBefore wins', async () => {
    const notBefore = Math.ceil(Date.now() / 1000) + 1;
    const { messageId } = await client().publishJSON({
      url: `${receiver.baseUrl}/hooks/not-before`,
      body: { n: 2 },
      notBefore,
      delay: '1h',
    });
    const delivery = await deliveryOf(messageId);
    expect(delivery.at).toBeGreaterThanOrEqual(notBefore * 1000);
    expect(delivery.at - notBefore * 1000).toBeLessThan(ON_TIME_MS);
  });

  it('when a batch mixes delayed and immediate items, then each arrives on its own time', async () => {
    const publishedAt = Date.now();
    const [delayed, immediate] = await client().batchJSON([
      { url: `${receiver.baseUrl}/hooks/batch-delayed`, body: { n: 3 }, delay: '4s' },
      { url: `${receiver.baseUrl}/hooks/batch-now`, body: { n: 4 } },
    ]);
    // The immediate one long before the delayed one is due (not held with it): the publish and the
    // delivery are assumed to take under 3 s.
    const now = await deliveryOf(immediate!.messageId);
    expect(now.at - publishedAt).toBeLessThan(3_000);
    const later = await deliveryOf(delayed!.messageId);
    expect(later.at).toBeGreaterThanOrEqual(publishedAt + 4_000);
  });

  it("when the delay is longer than the binding's limit, then the SDK gets a 400 naming spec.limits.maxDelay and nothing is stored (a batch item: its own error)", async () => {
    const inspect = connectTestRedis(redis, 1);
    try {
      const before = await snapshotDatabase(inspect);
      const original = console.error;
      console.error = () => undefined;
      try {
        await expect(
          client(limited).publishJSON({ url: `${receiver.baseUrl}/hooks/x`, body: {}, delay: '2h' }),
        ).rejects.toThrow(
          /Upstash-Delay 2h is longer than the queue's maximum delay of 1h \(QueueBinding spec.limits.maxDelay\)/,
        );
      } finally {
        console.error = original;
      }
      expect(await snapshotDatabase(inspect)).toEqual(before);
      // In a batch, the item over the limit alone is refused, in its place; the other is stored.
      const [stored, refused] = (await client(limited).batchJSON([
        { url: `${receiver.baseUrl}/hooks/x`, body: {} },
        { url: `${receiver.baseUrl}/hooks/y`, body: {}, notBefore: Math.floor(Date.now() / 1000) + 7_200 },
      ])) as unknown as [{ messageId: string }, { error: string }];
      expect(stored.messageId).toMatch(/^msg_/);
      expect(refused.error).toMatch(
        /^batch item 1: Upstash-Not-Before \d+ is further ahead than the queue's maximum delay of 1h/,
      );
    } finally {
      inspect.disconnect();
    }
  });
});
