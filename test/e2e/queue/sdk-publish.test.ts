import type { Client } from '@upstash/qstash';
import { Receiver } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/queue/test-receiver.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * The unchanged @upstash/qstash SDK against the queue handler on loopback, delivering to the
 * example receiver on loopback (allowed through the SSRF allowlist; nothing leaves 127.0.0.1).
 */
describe('publishing with the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let gateway: TestQueueGateway;
  let receiver: TestReceiver;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;

  const client = (token = target.token, of: QueueTarget = target): Client =>
    queueSdkClient(gateway, of, token);

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache', signingKey });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target, otherTarget] });
  });

  afterAll(async () => {
    await gateway?.stop();
    await receiver?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(() => {
    receiver.deliveries.length = 0;
    receiver.respond = () => 200;
  });

  const deliveryOf = (messageId: string) =>
    waitFor(
      `delivery of ${messageId}`,
      async () => receiver.deliveries.find((d) => d.headers['upstash-message-id'] === messageId),
      { timeoutMs: 10_000, intervalMs: 20 },
    );

  it('when publishJSON is called, then the JSON body arrives signed, with the forwarded headers unprefixed', async () => {
    const destination = `${receiver.baseUrl}/hooks/orders?source=sdk&n=1`;
    const { messageId } = await client().publishJSON({
      url: destination,
      body: { hello: 'world', n: 1 },
      headers: { 'X-Tenant': 'acme', Authorization: 'Bearer downstream' },
    });
    expect(messageId).toMatch(/^msg_/);
    const delivery = await deliveryOf(messageId);
    expect(delivery.method).toBe('POST');
    expect(delivery.url).toBe(destination);
    expect(JSON.parse(delivery.body.toString('utf8'))).toEqual({ hello: 'world', n: 1 });
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['x-tenant']).toBe('acme');
    expect(delivery.headers.authorization).toBe('Bearer downstream');
    expect(delivery.headers['upstash-forward-x-tenant']).toBeUndefined();
    expect(delivery.headers['upstash-retried']).toBe('0');
    expect(delivery.headers['user-agent']).toBe('Upstash-QStash');
    const verified = await new Receiver({
      currentSigningKey: target.signingKey,
      nextSigningKey: randomSigningKey(),
    }).verify({
      signature: String(delivery.headers['upstash-signature']),
      body: delivery.body.toString('utf8'),
      url: destination,
    });
    expect(verified).toBe(true);
  });

  it('when publish is called with a text body and a method, then the body arrives byte for byte with its content type', async () => {
    const body = 'line one\nline two — ünïcödé\r\n';
    const { messageId } = await client().publish({
      url: `${receiver.baseUrl}/text`,
      body,
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    });
    const delivery = await deliveryOf(messageId);
    expect(delivery.method).toBe('PUT');
    expect(delivery.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(delivery.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('when batchJSON is called, then every message gets an id in order and each one is delivered to its destination', async () => {
    const results = await client().batchJSON([
      { url: `${receiver.baseUrl}/batch/0`, body: { i: 0 } },
      { url: `${receiver.baseUrl}/batch/1`, body: { i: 1 }, headers: { 'X-Item': 'one' } },
      { url: `${receiver.baseUrl}/batch/2`, body: { i: 2 } },
    ]);
    expect(results).toHaveLength(3);
    const deliveries = await Promise.all(
      results.map((r) => deliveryOf((r as { messageId: string }).messageId)),
    );
    deliveries.forEach((delivery, i) => {
      expect(delivery.url).toBe(`${receiver.baseUrl}/batch/${i}`);
      expect(JSON.parse(delivery.body.toString('utf8'))).toEqual({ i });
    });
    expect(deliveries[1]?.headers['x-item']).toBe('one');
  });

  it('when a batch item says "queue": null, as the Python SDK sends an item without a queue, then it is published with no queue and delivered', async () => {
    const response = await fetch(`${gateway.queueUrl(target)}/v2/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([
        { destination: `${receiver.baseUrl}/no-queue`, headers: {}, body: 'x', queue: null },
      ]),
    });
    const [result] = (await response.json()) as { messageId?: string; error?: string }[];
    expect(result).toEqual({ messageId: expect.stringMatching(/^msg_/) });
    expect((await deliveryOf(result!.messageId!)).body.toString('utf8')).toBe('x');
  });

  it('when some items of a batch are bad, then each answers its own error in its place and the others are stored and delivered, as QStash does', async () => {
    const results = (await client().batchJSON([
      { url: `${receiver.baseUrl}/mixed/0`, body: { i: 0 } },
      { url: 'ftp://files.example/upload', body: { i: 1 } },
      { url: `${receiver.baseUrl}/mixed/2`, body: { i: 2 }, delay: '10 minutes' as '10m' },
      { urlGroup: 'no-such-group', body: { i: 3 } },
      { url: `${receiver.baseUrl}/mixed/4`, body: { i: 4 } },
    ])) as unknown as ({ messageId: string } | { error: string })[];
    expect(results).toEqual([
      { messageId: expect.stringMatching(/^msg_/) as unknown },
      { error: expect.stringMatching(/^batch item 1: .*only http and https/) as unknown },
      {
        error: expect.stringMatching(
          /^batch item 2: Upstash-Delay "10 minutes" is not a duration/,
        ) as unknown,
      },
      { error: 'batch item 3: url group no-such-group not found' },
      { messageId: expect.stringMatching(/^msg_/) as unknown },
    ]);
    const [first, , , , last] = results as { messageId: string }[];
    expect((await deliveryOf(first!.messageId)).url).toBe(`${receiver.baseUrl}/mixed/0`);
    expect((await deliveryOf(last!.messageId)).url).toBe(`${receiver.baseUrl}/mixed/4`);
    // Only the two good items were stored: nothing else reaches the receiver.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.deliveries.map((d) => new URL(d.url).pathname).sort()).toEqual(['/mixed/0', '/mixed/4']);
  });

  it('when every item of a well-formed batch is bad, then the answer is their errors and nothing is stored', async () => {
    const before = await snapshotDatabase(inspect);
    const response = await fetch(`${gateway.queueUrl(target)}/v2/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
      body: JSON.stringify([
        { destination: 'not a url' },
        { destination: 'https://a.example', queue: 'q/1' },
      ]),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual([
      { error: expect.stringMatching(/^batch item 0: destination "not a url" is not a URL/) as unknown },
      {
        error: `batch item 1: queue "q/1" may contain only letters, digits, '-', '_' and '.'`,
      },
    ]);
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });

  it('when a delivery is replayed with a tampered body or to another URL, then the example receiver answers 403', async () => {
    const { messageId } = await client().publishJSON({
      url: `${receiver.baseUrl}/original`,
      body: { amount: 10 },
    });
    const delivery = await deliveryOf(messageId);
    const signature = String(delivery.headers['upstash-signature']);
    const replay = (path: string, body: string) =>
      fetch(`${receiver.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'upstash-signature': signature },
        body,
      });
    expect((await replay('/original', delivery.body.toString('utf8'))).status).toBe(200);
    expect((await replay('/original', '{"amount":1000}')).status).toBe(403);
    expect((await replay('/elsewhere', delivery.body.toString('utf8'))).status).toBe(403);
  });

  it('when the token is wrong or missing, then the SDK gets 401 and nothing is delivered', async () => {
    const before = await snapshotDatabase(inspect);
    await expect(
      quietly(() => client('not-the-password').publishJSON({ url: `${receiver.baseUrl}/x`, body: {} })),
    ).rejects.toMatchObject({
      status: 401,
    });
    const missing = await fetch(`${gateway.queueUrl(target)}/v2/publish/${receiver.baseUrl}/x`, {
      method: 'POST',
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: expect.stringContaining('bearer token') });
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });

  it("when another binding's token is used on this binding's URL, then it is refused with 401", async () => {
    const before = await snapshotDatabase(inspect);
    await expect(
      quietly(() =>
        client(otherTarget.token, target).publishJSON({ url: `${receiver.baseUrl}/x`, body: {} }),
      ),
    ).rejects.toMatchObject({ status: 401 });
    expect(await snapshotDatabase(inspect)).toEqual(before);
    const { messageId } = await client(otherTarget.token, otherTarget).publishJSON({
      url: `${receiver.baseUrl}/own`,
      body: {},
    });
    expect(messageId).toMatch(/^msg_/);
  });

  it('when the signing keys rotate, then deliveries verify at receivers holding the new key as next, and as current', async () => {
    const previous = target.signingKey;
    const rotated = randomSigningKey();
    gateway.registry.set({ ...target, signingKey: rotated });
    const beforeUpdate = await startTestReceiver({ currentSigningKey: previous, nextSigningKey: rotated });
    const afterUpdate = await startTestReceiver({ currentSigningKey: rotated });
    try {
      for (const holder of [beforeUpdate, afterUpdate]) {
        const { messageId } = await client().publishJSON({
          url: `${holder.baseUrl}/rotated`,
          body: { k: 1 },
        });
        const delivery = await waitFor(
          'a delivery verified after the rotation',
          async () => holder.deliveries.find((d) => d.headers['upstash-message-id'] === messageId),
          { timeoutMs: 10_000, intervalMs: 20 },
        );
        expect(delivery.url).toBe(`${holder.baseUrl}/rotated`);
      }
      const stale = new Receiver({ currentSigningKey: previous, nextSigningKey: previous });
      const delivery = afterUpdate.deliveries[0]!;
      await expect(
        stale.verify({
          signature: String(delivery.headers['upstash-signature']),
          body: delivery.body.toString('utf8'),
          url: delivery.url,
        }),
      ).rejects.toThrow();
    } finally {
      gateway.registry.set(target);
      await Promise.all([beforeUpdate.close(), afterUpdate.close()]);
    }
  });
});
