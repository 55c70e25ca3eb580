import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import type { DeadLetter } from '../../../gateway/queue/core/dead-letter.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { MessageStore } from '../../../gateway/queue/stores/message-store.js';
import { installNetworkTripwire } from '../../helpers/network-tripwire.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/** Failed deliveries of messages published with the SDK, end to end through the queue handler and workers. */
describe('failed deliveries, published with the SDK', () => {
  let redis: RedisServer;
  const inspectors = new Map<number, Redis>();
  let destination: RecordingDestination;

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
  });
  afterAll(async () => {
    for (const connection of inspectors.values()) connection.disconnect();
    await destination?.close();
    await redis?.stop();
  });

  function targetFor(db: number): QueueTarget {
    return testQueueTarget(redis, { name: `db${db}`, db });
  }

  async function deadLetterOf(gatewayPrefix: string, db: number, messageId: string): Promise<DeadLetter> {
    if (!inspectors.has(db)) inspectors.set(db, connectTestRedis(redis, db));
    const store = new MessageStore(inspectors.get(db)!, queueKeys(gatewayPrefix));
    return waitFor(
      `the dead letter of ${messageId}`,
      async () => (await store.deadLetters(100)).find((l) => l.messageId === messageId),
      {
        timeoutMs: 10_000,
      },
    );
  }

  it('when the destination keeps failing, then the SDK-set retries and retry delay are used and the message is dead-lettered', async () => {
    const config = testQueueConfig();
    const target = targetFor(0);
    const gateway: TestQueueGateway = await startTestQueueGateway({ config, targets: [target] });
    try {
      destination.answer = () => ({ status: 500 });
      const client = queueSdkClient(gateway, target);
      const { messageId } = await client.publishJSON({
        url: `${destination.baseUrl}/always-500`,
        body: { attempt: 'me' },
        retries: 2,
        retryDelay: '200',
        headers: { 'X-Request-Id': 'r-1' },
      });
      const letter = await deadLetterOf(config.keyPrefix, 0, messageId);
      const attempts = destination.attemptsOf(messageId);
      expect(attempts.map((a) => a.headers['upstash-retried'])).toEqual(['0', '1', '2']);
      expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(195);
      expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(195);
      expect(attempts.every((a) => a.headers['x-request-id'] === 'r-1')).toBe(true);
      expect(letter).toMatchObject({
        reason: 'retries-exhausted',
        lastStatus: 500,
        headers: { 'x-request-id': 'r-1', 'content-type': 'application/json' },
      });
      expect(Buffer.from(letter.bodyBase64, 'base64').toString()).toBe('{"attempt":"me"}');
    } finally {
      await gateway.stop();
    }
  });

  it('when a destination name resolves to loopback and loopback is not allowlisted, then the delivery is refused without connecting and dead-lettered', async () => {
    const config = testQueueConfig({ ssrfAllowlist: [] });
    const target = targetFor(1);
    const port = new URL(destination.baseUrl).port;
    const gateway = await startTestQueueGateway({
      config,
      targets: [target],
      // A name that resolves to 127.0.0.1, as an attacker's DNS would answer; no DNS query is made.
      resolve: async (hostname) =>
        hostname === 'loopback-alias.test' ? [{ address: '127.0.0.1', family: 4 }] : [],
    });
    const tripwire = installNetworkTripwire();
    const before = destination.requests.length;
    try {
      const client = queueSdkClient(gateway, target);
      const { messageId } = await client.publishJSON({
        url: `http://loopback-alias.test:${port}/internal`,
        body: { x: 1 },
      });
      const letter = await deadLetterOf(config.keyPrefix, 1, messageId);
      expect(letter).toMatchObject({
        reason: 'destination-refused',
        lastError: expect.stringMatching(/loopback/),
      });
      expect(destination.requests.length).toBe(before);
      expect(tripwire.violations).toEqual([]);
    } finally {
      tripwire.uninstall();
      await gateway.stop();
    }
  });
});
