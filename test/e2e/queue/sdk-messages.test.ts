import { createHash } from 'node:crypto';
import type { Client } from '@upstash/qstash';
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
 * The SDK's messages API (get, cancel, delete, deleteMany, deleteAll) against pending messages:
 * delayed, queued with the workers stopped, waiting for a retry, and held by a worker mid-attempt.
 */
describe('the messages API through the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let receiver: TestReceiver;
  let target: QueueTarget;
  let other: QueueTarget;
  let inspect: Redis;

  const client = (token = target.token): Client => queueSdkClient(gateway, target, token);
  const hook = (name: string) => `${receiver.baseUrl}/hooks/${name}`;
  const deliveriesOf = (id: string) =>
    receiver.deliveries.filter((d) => d.headers['upstash-message-id'] === id);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    redis = await startRedis();
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache', signingKey });
    other = testQueueTarget(redis, {
      namespace: 'tenant-b',
      name: 'cache',
      db: 1,
      signingKey: randomSigningKey(),
    });
    other = { ...other, token: 'another-bindings-token' };
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config: testQueueConfig(),
      targets: [target, other],
      workers: false,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await receiver?.close();
    inspect?.disconnect();
    await redis?.stop();
  });

  afterEach(async () => {
    await gateway.stopWorkers();
    await client().messages.cancel({ all: true });
    receiver.deliveries.length = 0;
    receiver.respond = () => 200;
  });

  it('when a delayed message with two labels is read, then the SDK gets its QStash fields (label the first, labels both) and a filter on either label finds it', async () => {
    const before = Date.now();
    const { messageId } = await client().publishJSON({
      url: hook('get?x=1'),
      body: { hello: 'world' },
      headers: { 'X-Tenant': 'acme' },
      delay: '1h',
      retries: 2,
      retryDelay: '1000 * retried',
      label: ['orders', 'eu'],
    });
    const message = await client().messages.get(messageId);
    expect(message).toMatchObject({
      messageId,
      url: hook('get?x=1'),
      method: 'POST',
      body: '{"hello":"world"}',
      maxRetries: 2,
      retryDelayExpression: '1000 * retried',
      label: 'orders',
      labels: ['orders', 'eu'],
    });
    expect(message.header).toMatchObject({ 'x-tenant': ['acme'], 'content-type': ['application/json'] });
    expect(message.createdAt).toBeGreaterThanOrEqual(before);
    expect(message.notBefore).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(message.notBefore).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(await client().messages.cancel({ filter: { label: 'eu' } })).toEqual({ cancelled: 1 });
  });

  it('when a queued message has a binary body, then it is read with bodyBase64, and with notBefore though never delayed', async () => {
    const body = Buffer.from([0xff, 0xfe, 0x00, 0x01]);
    const { messageId } = await client().publish({
      url: hook('binary'),
      body: body as unknown as string,
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    const message = await client().messages.get(messageId);
    expect(message.bodyBase64).toBe(body.toString('base64'));
    expect(message.body).toBeUndefined();
    // Never delayed, it still has notBefore (the Python SDK's parser requires it): its creation.
    expect(message.notBefore).toBe(message.createdAt);
  });

  it('when a message waits for a retry, then it is read with its next delivery time, and cancelling it stops the retries', async () => {
    receiver.respond = () => 500;
    gateway.startWorkers();
    const { messageId } = await client().publishJSON({
      url: hook('retrying'),
      body: {},
      retries: 3,
      retryDelay: '60000',
    });
    await waitFor('the first attempt', async () => deliveriesOf(messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const message = await waitFor(
      'the retry to be scheduled',
      async () => {
        const read = await client().messages.get(messageId);
        return (read.notBefore ?? 0) > Date.now() + 50_000 ? read : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(message.notBefore).toBeGreaterThan(Date.now() + 50_000);
    expect(await client().messages.cancel(messageId)).toEqual({ cancelled: 1 });
    await expect(quietly(() => client().messages.get(messageId))).rejects.toThrow(/not found/);
  });

  it('when a message is cancelled during its delivery, then no retry is delivered', async () => {
    let release: () => void = () => undefined;
    receiver.respond = () => new Promise<number>((resolve) => (release = () => resolve(500)));
    gateway.startWorkers();
    const { messageId } = await client().publishJSON({
      url: hook('in-flight'),
      body: {},
      retries: 3,
      retryDelay: '10',
    });
    await waitFor('the attempt to be under way', async () => deliveriesOf(messageId)[0], {
      timeoutMs: 10_000,
    });
    expect(await client().messages.cancel(messageId)).toEqual({ cancelled: 1 });
    release();
    receiver.respond = () => 500;
    await sleep(500);
    expect(deliveriesOf(messageId)).toHaveLength(1);
    expect(await inspect.zcard('{settee-queue}:retry-schedule')).toBe(0);
  });

  it('when a delayed message is cancelled, then it is never delivered and reads as not found', async () => {
    gateway.startWorkers();
    const { messageId } = await client().publishJSON({ url: hook('cancelled'), body: {}, delay: 1 });
    expect(await client().messages.cancel(messageId)).toEqual({ cancelled: 1 });
    await sleep(1_500);
    expect(deliveriesOf(messageId)).toEqual([]);
    await expect(quietly(() => client().messages.get(messageId))).rejects.toThrow(/not found/);
    await expect(quietly(() => client().messages.cancel(messageId))).rejects.toThrow(/not found/);
  });

  it('when messages are cancelled by ids, by label filter, and all, then each answers how many it cancelled', async () => {
    const publish = (label?: string, delay: '1h' | undefined = '1h') =>
      client()
        .publishJSON({ url: hook('bulk'), body: {}, ...(delay && { delay }), ...(label && { label }) })
        .then((r) => (r as { messageId: string }).messageId);
    const [a, b, c] = await Promise.all([publish(), publish(), publish()]);
    expect(await client().messages.cancel([a!, b!, 'msg_unknown'])).toEqual({ cancelled: 2 });
    expect(await client().messages.deleteMany([c!])).toBe(1);

    const [red1, red2, blue, queued] = await Promise.all([
      publish('red'),
      publish('red'),
      publish('blue'),
      publish('red', undefined),
    ]);
    expect(await client().messages.cancel({ filter: { label: 'red' } })).toEqual({ cancelled: 3 });
    for (const id of [red1, red2, queued])
      await expect(quietly(() => client().messages.get(id!))).rejects.toThrow(/not found/);
    expect((await client().messages.get(blue!)).label).toBe('blue');

    await Promise.all([publish(), publish(undefined, undefined)]);
    expect(await client().messages.deleteAll()).toBe(3);
    expect(await client().messages.cancel({ all: true })).toEqual({ cancelled: 0 });
  });

  it('when the Python SDK cancels with a JSON body (cancel_many), or with none (cancel_all), then it is read as the query form is', async () => {
    const publish = async (name: string) =>
      (await client().publishJSON({ url: hook(name), body: {}, delay: '1h' })).messageId;
    const [a, b, c] = [await publish('body-a'), await publish('body-b'), await publish('body-c')];
    const cancel = (body?: string) =>
      fetch(`${gateway.queueUrl(target)}/v2/messages`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body }),
      });
    const byIds = await cancel(JSON.stringify({ messageIds: [a, 'msg_unknown'] }));
    expect(byIds.status).toBe(200);
    expect(await byIds.json()).toEqual({ cancelled: 1 });
    await expect(quietly(() => client().messages.get(a))).rejects.toMatchObject({ status: 404 });
    expect((await client().messages.get(b)).messageId).toBe(b);
    const before = await snapshotDatabase(inspect);
    for (const [body, error] of [
      ['{"messageIds": "msg_1"}', 'body field messageIds must be an array of ids'],
      ['{"ids": ["msg_1"]}', 'unknown body field "ids"'],
      ['[1]', 'the body must be a JSON object such as {"messageIds": ["..."]}'],
      ['{"messageIds": [', 'the body is not valid JSON'],
      ['{}', 'the body names nothing: body field messageIds is missing'],
    ]) {
      const refused = await cancel(body);
      expect({ status: refused.status, body: await refused.json() }).toEqual({
        status: 400,
        body: { error },
      });
    }
    const both = await fetch(`${gateway.queueUrl(target)}/v2/messages?label=x`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${target.token}` },
      body: JSON.stringify({ messageIds: [b] }),
    });
    expect(both.status).toBe(400);
    expect(await snapshotDatabase(inspect)).toEqual(before);
    const all = await cancel();
    expect(await all.json()).toEqual({ cancelled: 2 });
    for (const id of [b, c])
      await expect(quietly(() => client().messages.get(id))).rejects.toMatchObject({ status: 404 });
  });

  it('when a message is published with redact, then messages.get and the DLQ show hashes while the delivery carries the values', async () => {
    const sha = (value: string) => `REDACTED:${createHash('sha256').update(value).digest('hex')}`;
    const published = {
      url: hook('redacted'),
      body: { card: '4111' },
      headers: { Authorization: 'Bearer secret', 'X-Tenant': 'acme' },
      redact: { body: true as const, header: ['Authorization'] },
    };
    const { messageId } = await client().publishJSON({ ...published, delay: '1h' });
    const message = await client().messages.get(messageId);
    expect(message.body).toBe(sha('{"card":"4111"}'));
    expect(message.header).toMatchObject({ authorization: [sha('Bearer secret')], 'x-tenant': ['acme'] });

    receiver.respond = () => 500;
    gateway.startWorkers();
    const failed = await client().publishJSON({ ...published, retries: 0 });
    const delivery = await waitFor('the attempt', async () => deliveriesOf(failed.messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(delivery.body.toString()).toBe('{"card":"4111"}');
    expect(delivery.headers.authorization).toBe('Bearer secret');
    const letter = await waitFor(
      'the dead letter',
      async () => (await client().dlq.listMessages()).messages.find((m) => m.messageId === failed.messageId),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(letter.body).toBe(sha('{"card":"4111"}'));
    expect(letter.header).toMatchObject({ authorization: [sha('Bearer secret')] });
    await client().dlq.delete({ all: true });
  });

  it('when messages.delete (deprecated) is called, then the message is cancelled', async () => {
    const { messageId } = await client().publishJSON({ url: hook('delete'), body: {}, delay: '1h' });
    await client().messages.delete(messageId);
    await expect(quietly(() => client().messages.get(messageId))).rejects.toThrow(/not found/);
  });

  it("when another binding's token or a bad filter is sent, then it is refused and nothing changes", async () => {
    const { messageId } = await client().publishJSON({ url: hook('guarded'), body: {}, delay: '1h' });
    const before = await snapshotDatabase(inspect);
    await expect(quietly(() => client(other.token).messages.get(messageId))).rejects.toThrow(/invalid token/);
    await expect(quietly(() => client(other.token).messages.cancel({ all: true }))).rejects.toThrow(
      /invalid token/,
    );
    await expect(
      quietly(() => client().messages.cancel({ filter: { fromDate: 20, toDate: 10 } })),
    ).rejects.toThrow(/fromDate is after toDate/);
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });
});
