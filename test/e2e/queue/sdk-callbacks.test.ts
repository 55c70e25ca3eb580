import type { Client } from '@upstash/qstash';
import { Receiver } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import type { CallbackBody } from '../../../gateway/queue/workers/callback-message.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { connectTestRedis, settledSnapshot, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import {
  startTestReceiver,
  type RecordedDelivery,
  type TestReceiver,
} from '../../helpers/queue/test-receiver.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

const KEY_PREFIX = '{callback-test}:';

/**
 * Upstash-Callback and Upstash-Failure-Callback through the unchanged SDK: the destination is a
 * recording server that answers as the test says; the callbacks go to the example receiver, which
 * verifies each one's signature with the SDK's Receiver before recording it.
 */
describe('callbacks with the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let destination: RecordingDestination;
  let callbacks: TestReceiver;
  let target: QueueTarget;
  let inspect: Redis;

  const client = (): Client => queueSdkClient(gateway, target);

  beforeAll(async () => {
    redis = await startRedis();
    const signingKey = randomSigningKey();
    target = testQueueTarget(redis, { signingKey });
    destination = await startRecordingDestination();
    callbacks = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({
      config: testQueueConfig({ keyPrefix: KEY_PREFIX }),
      targets: [target],
    });
  });
  afterAll(async () => {
    await gateway?.stop();
    await destination?.close();
    await callbacks?.close();
    inspect?.disconnect();
    await redis?.stop();
  });
  beforeEach(() => {
    destination.answer = () => ({ status: 200 });
    callbacks.respond = () => 200;
    callbacks.deliveries.length = 0;
  });

  const callbacksFor = (messageId: string, path: string): RecordedDelivery[] =>
    callbacks.deliveries.filter(
      (d) =>
        d.url.endsWith(path) &&
        (JSON.parse(d.body.toString('utf8')) as CallbackBody).sourceMessageId === messageId,
    );

  const waitForCallbacks = (messageId: string, path: string, count: number) =>
    waitFor(
      `${count} callback(s) of ${messageId} at ${path}`,
      async () => {
        const found = callbacksFor(messageId, path);
        return found.length >= count ? found : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );

  const bodyOf = (delivery: RecordedDelivery): CallbackBody =>
    JSON.parse(delivery.body.toString('utf8')) as CallbackBody;

  it('when publishJSON names a callback with its own method and headers, then the answer arrives there as QStash’s callback body, signed for the callback URL', async () => {
    destination.answer = () => ({ status: 201, headers: { 'x-answer': '42' } });
    const url = `${destination.baseUrl}/orders?n=1`;
    const callbackUrl = `${callbacks.baseUrl}/on-answer`;
    const { messageId } = await client().publishJSON({
      url,
      body: { order: 1 },
      headers: {
        'X-Tenant': 'acme',
        'Upstash-Callback-Method': 'PUT',
        'Upstash-Callback-Forward-X-Callback-Secret': 's3cret',
      },
      callback: callbackUrl,
    });
    const [callback] = await waitForCallbacks(messageId, '/on-answer', 1);
    expect(callback!.method).toBe('PUT');
    expect(callback!.headers['x-callback-secret']).toBe('s3cret');
    expect(callback!.headers['content-type']).toBe('application/json');
    const verified = await new Receiver({
      currentSigningKey: target.signingKey,
      nextSigningKey: randomSigningKey(),
    }).verify({
      signature: String(callback!.headers['upstash-signature']),
      body: callback!.body.toString('utf8'),
      url: callbackUrl,
    });
    expect(verified).toBe(true);
    const body = bodyOf(callback!);
    expect(body).toMatchObject({
      status: 201,
      retried: 0,
      maxRetries: 3,
      sourceMessageId: messageId,
      url,
      method: 'POST',
    });
    expect(body.header['x-answer']).toEqual(['42']);
    expect(Buffer.from(body.body, 'base64').toString('utf8')).toBe('answer');
    expect(body.sourceHeader['x-tenant']).toEqual(['acme']);
    expect(JSON.parse(Buffer.from(body.sourceBody, 'base64').toString('utf8'))).toEqual({ order: 1 });
    expect(body.dlqId).toBeUndefined();
    // The callback is a message of its own, not the source delivered twice.
    expect(callback!.headers['upstash-message-id']).not.toBe(messageId);
    expect(destination.attemptsOf(messageId)).toHaveLength(1);
  });

  it('when the destination keeps failing, then the callback reports every attempt and the failure callback fires once, after the last', async () => {
    destination.answer = () => ({ status: 500 });
    const { messageId } = await client().publishJSON({
      url: `${destination.baseUrl}/failing`,
      body: { order: 2 },
      retries: 1,
      callback: `${callbacks.baseUrl}/every-answer`,
      failureCallback: `${callbacks.baseUrl}/on-failure`,
    });
    const [failure] = await waitForCallbacks(messageId, '/on-failure', 1);
    const answers = await waitForCallbacks(messageId, '/every-answer', 2);
    expect(answers.map((a) => bodyOf(a).retried).sort()).toEqual([0, 1]);
    expect(answers.every((a) => bodyOf(a).status === 500)).toBe(true);
    const failureBody = bodyOf(failure!);
    expect(failureBody).toMatchObject({ status: 500, retried: 1, maxRetries: 1, sourceMessageId: messageId });
    // dlqId names the message's dead letter, as client.dlq reads it.
    const { messages } = await client().dlq.listMessages({ filter: { messageId } });
    expect(messages.map((m) => m.dlqId)).toEqual([failureBody.dlqId]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(callbacksFor(messageId, '/on-failure')).toHaveLength(1);
    expect(callbacksFor(messageId, '/every-answer')).toHaveLength(2);
  });

  it('when the callback URL fails, then the callback is retried with its own retries and then dead-lettered like any message', async () => {
    let refusals = 0;
    callbacks.respond = (d) =>
      d.url.endsWith('/flaky') && refusals++ < 1 ? 503 : d.url.endsWith('/down') ? 500 : 200;
    const { messageId: retried } = await client().publishJSON({
      url: `${destination.baseUrl}/ok`,
      body: { order: 3 },
      headers: { 'Upstash-Callback-Retries': '2', 'Upstash-Callback-Retry-Delay': '10' },
      callback: `${callbacks.baseUrl}/flaky`,
    });
    const attempts = await waitForCallbacks(retried, '/flaky', 2);
    expect(attempts.map((a) => a.headers['upstash-retried'])).toEqual(['0', '1']);

    const { messageId: lost } = await client().publishJSON({
      url: `${destination.baseUrl}/ok`,
      body: { order: 4 },
      headers: { 'Upstash-Callback-Retries': '0' },
      callback: `${callbacks.baseUrl}/down`,
    });
    await waitForCallbacks(lost, '/down', 1);
    const letter = await waitFor(
      'the callback’s dead letter',
      async () =>
        (await client().dlq.listMessages()).messages.find((m) => m.url === `${callbacks.baseUrl}/down`),
      { timeoutMs: 10_000 },
    );
    expect((JSON.parse(letter.body ?? '{}') as CallbackBody).sourceMessageId).toBe(lost);
  });

  it('when a batch item names a callback, then its answer is reported there', async () => {
    const [result] = await client().batchJSON([
      { url: `${destination.baseUrl}/batch`, body: { i: 0 }, callback: `${callbacks.baseUrl}/batch-answer` },
    ]);
    const messageId = (result as { messageId: string }).messageId;
    const [callback] = await waitForCallbacks(messageId, '/batch-answer', 1);
    expect(bodyOf(callback!).status).toBe(200);
  });

  it.each([
    [{ callback: 'http://10.0.0.1/hook' }, /Upstash-Callback: .*10\.0\.0\.1/],
    [{ callback: 'not a url' }, /Upstash-Callback: destination \\*"not a url\\*" is not a URL/],
    [{ failureCallback: 'ftp://example.com/x' }, /Upstash-Failure-Callback: .*only http and https/],
    [
      { headers: { 'Upstash-Callback-Retries': 'abc' } },
      /Upstash-Callback-Retries \\*"abc\\*" is not a whole number/,
    ],
    [{ headers: { 'Upstash-Callback-Timeout': 'soon' } }, /Upstash-Callback-Timeout \\*"soon/],
    [{ headers: { 'Upstash-Failure-Callback-Method': 'BREW' } }, /Upstash-Failure-Callback-Method \\*"BREW/],
    [
      { headers: { 'Upstash-Callback-Retry-Delay': 'retried +' } },
      /Upstash-Callback-Retry-Delay \\*"retried \+/,
    ],
    [{ headers: { 'Upstash-Callback-Delay': '10s' } }, /upstash-callback-delay is not supported/],
    [
      { headers: { 'Upstash-Failure-Callback-Flow-Control-Value': 'parallelism=1' } },
      /Upstash-Failure-Callback-Flow-Control-Value is set without Upstash-Failure-Callback-Flow-Control-Key/,
    ],
  ])(
    'when a publish asks for %j, then it answers 400 naming the header and stores nothing',
    async (options, message) => {
      // The test before waits for its callback to arrive, not for the callback message's own
      // acknowledgement, which may still be landing (CI, 03:20 UTC: its entry index key listed,
      // then gone, in this snapshot).
      const before = await settledSnapshot(inspect);
      const withCallback =
        'callback' in options || 'failureCallback' in options
          ? {}
          : { callback: `${callbacks.baseUrl}/x`, failureCallback: `${callbacks.baseUrl}/y` };
      await expect(
        quietly(() =>
          client().publishJSON({
            url: `${destination.baseUrl}/never`,
            body: {},
            ...withCallback,
            ...options,
          }),
        ),
      ).rejects.toThrow(message);
      expect(await snapshotDatabase(inspect)).toEqual(before);
    },
  );

  it('when a schedule names a callback and a failure callback, then get shows them and each tick’s message reports there', async () => {
    destination.answer = () => ({ status: 500 });
    const url = `${destination.baseUrl}/scheduled`;
    const { scheduleId } = await client().schedules.create({
      destination: url,
      cron: '0 0 1 1 *',
      retries: 0,
      callback: `${callbacks.baseUrl}/tick-answer`,
      failureCallback: `${callbacks.baseUrl}/tick-failure`,
      headers: { 'Upstash-Callback-Forward-X-Hook': 'schedule' },
    });
    expect(await client().schedules.get(scheduleId)).toMatchObject({
      callback: `${callbacks.baseUrl}/tick-answer`,
      failureCallback: `${callbacks.baseUrl}/tick-failure`,
    });
    // The tick comes now, as the clock reaching it would.
    await inspect.zadd(queueKeys(KEY_PREFIX).scheduleTicks, 'XX', Date.now() - 1_000, scheduleId);
    const failure = await waitFor(
      'the tick’s failure callback',
      async () => callbacks.deliveries.find((d) => d.url.endsWith('/tick-failure')),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    const failed = bodyOf(failure);
    expect(failed).toMatchObject({ status: 500, url, retried: 0, maxRetries: 0 });
    expect(destination.attemptsOf(failed.sourceMessageId)[0]?.headers['upstash-schedule-id']).toBe(
      scheduleId,
    );
    const [answer] = await waitForCallbacks(failed.sourceMessageId, '/tick-answer', 1);
    expect(answer!.headers['x-hook']).toBe('schedule');
    expect(bodyOf(answer!)).toMatchObject({ status: 500, sourceMessageId: failed.sourceMessageId });
    await client().schedules.delete(scheduleId);
  });

  it('when a pending message has callbacks, then messages.get shows their URLs, as QStash’s message fields do', async () => {
    const { messageId } = await client().publishJSON({
      url: `${destination.baseUrl}/later`,
      body: {},
      delay: 60,
      callback: `${callbacks.baseUrl}/later-answer`,
      failureCallback: `${callbacks.baseUrl}/later-failure`,
    });
    expect(await client().messages.get(messageId)).toMatchObject({
      messageId,
      callback: `${callbacks.baseUrl}/later-answer`,
      failureCallback: `${callbacks.baseUrl}/later-failure`,
    });
    await client().messages.cancel(messageId);
  });

  it('when a callback setting comes without its callback URL, then the publish answers 400', async () => {
    await expect(
      quietly(() =>
        client().publishJSON({
          url: `${destination.baseUrl}/never`,
          body: {},
          headers: { 'Upstash-Callback-Retries': '1' },
        }),
      ),
    ).rejects.toThrow(/upstash-callback-retries is set without Upstash-Callback/);
  });
});
