import type { Client } from '@upstash/qstash';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import type { MessageEvent } from '../../../gateway/queue/core/message-event.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * The SDK's logs()/events() (GET /v2/events) and the documented GET /v2/logs, on the states the
 * queue records as messages are published, delivered, retried, dead-lettered and cancelled.
 */
describe('events through the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let inspect: Redis;
  let gateway: TestQueueGateway;
  let silent: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let otherTarget: QueueTarget;

  const client = (of: TestQueueGateway = gateway, token = target.token): Client =>
    queueSdkClient(of, target, token);
  const hook = (name: string) => `${destination.baseUrl}/hooks/${name}`;

  const statesOf = (messageId: string, expected: number) =>
    waitFor(
      `${expected} events of ${messageId}`,
      async () => {
        const { logs } = await client().logs({ filter: { messageId } });
        return logs.length >= expected ? logs : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    inspect = connectTestRedis(redis);
    destination = await startRecordingDestination();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache' });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target, otherTarget] });
    // Another gateway replica on the same database, with event recording switched off.
    silent = await startTestQueueGateway({
      config: testQueueConfig({ recordEvents: false }),
      targets: [target],
      workers: false,
    });
  });

  afterAll(async () => {
    await silent?.stop();
    await gateway?.stop();
    await destination?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(() => {
    destination.answer = (request) =>
      request.path.startsWith('/hooks/fail') ? { status: 500 } : { status: 200 };
  });

  it("when a message with two labels is delivered, then its CREATED, ACTIVE and DELIVERED events come newest first, DELIVERED with the receiver's status, each with both labels and found by either", async () => {
    const before = Date.now();
    const { messageId } = await client().publishJSON({ url: hook('ok'), body: {}, label: ['orders', 'eu'] });
    const logs = await statesOf(messageId, 3);
    expect(logs.map((l) => l.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(logs[2]).toMatchObject({ messageId, url: hook('ok'), label: 'orders', labels: ['orders', 'eu'] });
    const byLabel = await client().logs({ filter: { messageId, label: 'eu' } });
    expect(byLabel.logs.map((l) => l.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(logs[2]!.time).toBeGreaterThanOrEqual(before);
    expect(logs[0]).toMatchObject({ state: 'DELIVERED', responseStatus: 200 });
    const { events } = await client().events({ filter: { messageId } });
    expect(events.map((e) => e.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
  });

  it('when a message fails, is retried and fails again, then ERROR, RETRY with the next delivery time, and FAILED are recorded', async () => {
    const { messageId } = await client().publishJSON({
      url: hook('fail'),
      body: {},
      retries: 1,
      retryDelay: '50',
    });
    const logs = await statesOf(messageId, 7);
    expect(logs.map((l) => l.state)).toEqual([
      'FAILED',
      'ERROR',
      'ACTIVE',
      'RETRY',
      'ERROR',
      'ACTIVE',
      'CREATED',
    ]);
    const retry = logs[3]!;
    expect(retry.nextDeliveryTime).toBeGreaterThanOrEqual(retry.time);
    expect(logs[1]).toMatchObject({ error: 'status 500', responseStatus: 500 });
  });

  it('when a delayed message is cancelled, then CREATED with its due time, CANCEL_REQUESTED and CANCELLED are recorded', async () => {
    const { messageId } = await client().publishJSON({
      url: hook('later'),
      body: {},
      delay: '1h',
      label: 'x',
    });
    await client().messages.cancel(messageId);
    const logs = await statesOf(messageId, 3);
    expect(logs.map((l) => l.state)).toEqual(['CANCELLED', 'CANCEL_REQUESTED', 'CREATED']);
    expect(logs[0]).toMatchObject({ url: hook('later'), label: 'x' });
    expect(logs[2]!.nextDeliveryTime).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it('when events are filtered by queueName (the SDK sends it), then only the events of that queue’s messages come', async () => {
    const queued = await client()
      .queue({ queueName: 'events-q' })
      .enqueueJSON({ url: hook('queued'), body: {} });
    const plain = await client().publishJSON({ url: hook('plain'), body: {} });
    await statesOf(queued.messageId, 3);
    await statesOf(plain.messageId, 3);
    const { logs } = await client().logs({ filter: { queueName: 'events-q' } });
    // The SDK's Log type omits queueName; QStash's LogEntry (and the gateway) carry it.
    expect(logs.map((l) => [l.messageId, l.state, (l as Partial<MessageEvent>).queueName])).toEqual([
      [queued.messageId, 'DELIVERED', 'events-q'],
      [queued.messageId, 'ACTIVE', 'events-q'],
      [queued.messageId, 'CREATED', 'events-q'],
    ]);
    expect((await client().events({ filter: { queueName: 'no-such-queue' } })).events).toEqual([]);
  });

  it('when events are filtered and paged, then the filters hold and the cursor walks every event once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1)
      ids.push((await client().publishJSON({ url: hook(`paged-${i}`), body: {}, label: 'paged' })).messageId);
    await Promise.all(ids.map((id) => statesOf(id, 3)));
    const created = await client().logs({ filter: { label: 'paged', state: 'CREATED' } });
    expect(created.logs.map((l) => l.messageId)).toEqual([...ids].reverse());
    const byUrl = await client().logs({ filter: { url: hook('paged-1') } });
    expect(new Set(byUrl.logs.map((l) => l.messageId))).toEqual(new Set([ids[1]]));
    const byIds = await client().logs({ messageIds: [ids[0]!, ids[2]!] });
    expect(new Set(byIds.logs.map((l) => l.messageId))).toEqual(new Set([ids[0], ids[2]]));

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client().logs({ filter: { label: 'paged', count: 2 }, ...(cursor && { cursor }) });
      seen.push(...page.logs.map((l) => `${l.messageId}:${l.state}`));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
  });

  it('when GET /v2/logs is asked, then it answers as /v2/events does; bad input is a 400 naming the parameter', async () => {
    const ask = (path: string) =>
      fetch(`${gateway.queueUrl(target)}${path}`, { headers: { authorization: `Bearer ${target.token}` } });
    const logs = (await (await ask('/v2/logs?count=5')).json()) as { events: unknown[] };
    const events = (await (await ask('/v2/events?count=5')).json()) as { events: unknown[] };
    expect(logs.events).toEqual(events.events);
    for (const [path, message] of [
      ['/v2/events?cursor=abc', /cursor "abc" is not a cursor this API gave/],
      ['/v2/events?state=DONE', /state must be one of/],
      ['/v2/events?count=1001', /count must be a whole number from 1 to 1000/],
      ['/v2/events?workflowRunId=wfr_1', /filter workflowRunId is not supported/],
    ] as const) {
      const response = await ask(path);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(message);
    }
    // Another binding's token (a real one, of tenant-b's database) opens nothing here.
    for (const path of ['/v2/events', '/v2/logs']) {
      const wrongToken = await fetch(`${gateway.queueUrl(target)}${path}`, {
        headers: { authorization: `Bearer ${otherTarget.token}` },
      });
      expect(wrongToken.status).toBe(401);
    }
    const post = await fetch(`${gateway.queueUrl(target)}/v2/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
    });
    expect(post.status).toBe(405);
  });

  it('when a message is published, then every event carries its fields as QStash’s do: header, base64 body, method, retries, callbacks, with Upstash-Redact-Fields honoured', async () => {
    const { messageId } = await client().publish({
      url: hook('fields'),
      body: 'plain body',
      method: 'PUT',
      retries: 2,
      timeout: '1s',
      headers: { 'Content-Type': 'text/plain', 'X-Visible': 'yes', 'X-Secret': 'hunter2' },
      callback: hook('answer-callback'),
      failureCallback: hook('failure-callback'),
      redact: { header: ['X-Secret'] },
    });
    const logs = await statesOf(messageId, 3);
    for (const log of logs as unknown as MessageEvent[]) {
      expect(log).toMatchObject({
        messageId,
        url: hook('fields'),
        method: 'PUT',
        maxRetries: 2,
        timeout: 1_000,
        body: Buffer.from('plain body').toString('base64'),
        callback: hook('answer-callback'),
        failureCallback: hook('failure-callback'),
      });
      expect(log.header).toEqual({
        'content-type': ['text/plain'],
        'x-visible': ['yes'],
        'x-secret': [`REDACTED:${createHash('sha256').update('hunter2').digest('hex')}`],
      });
    }
    const { messageId: hidden } = await client().publish({
      url: hook('hidden'),
      body: 'card 4242',
      redact: { body: true },
    });
    const [created] = (await statesOf(hidden, 1)).slice(-1) as unknown as MessageEvent[];
    expect(created!.body).toBe(`REDACTED:${createHash('sha256').update('card 4242').digest('hex')}`);
  });

  it('when an attempt fails, then its ERROR (and the FAILED) event carries the answer: responseStatus, responseHeaders and the base64 responseBody', async () => {
    destination.answer = () => ({ status: 503, headers: { 'x-why': 'maintenance' } });
    const { messageId } = await client().publishJSON({ url: hook('down'), body: {}, retries: 0 });
    const logs = (await statesOf(messageId, 4)) as unknown as MessageEvent[];
    expect(logs.map((l) => l.state)).toEqual(['FAILED', 'ERROR', 'ACTIVE', 'CREATED']);
    for (const log of logs.slice(0, 2)) {
      expect(log).toMatchObject({
        responseStatus: 503,
        responseBody: Buffer.from('answer').toString('base64'),
      });
      expect(log.responseHeaders?.['x-why']).toEqual(['maintenance']);
    }
    expect(logs[3]!.responseStatus).toBeUndefined();
  });

  it('when a schedule ticks, then its message records CREATED (with scheduleId) as a published one does', async () => {
    const { scheduleId } = await client().schedules.create({
      destination: hook('ticked'),
      cron: '0 0 1 1 *',
    });
    await inspect.zadd(
      queueKeys(testQueueConfig().keyPrefix).scheduleTicks,
      'XX',
      Date.now() - 1_000,
      scheduleId,
    );
    const ticked = await waitFor(
      'the tick’s events',
      async () => {
        const { logs } = await client().logs({ filter: { scheduleId } } as never);
        return logs.some((l) => l.state === 'DELIVERED') ? logs : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(ticked.map((l) => l.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(ticked[2]).toMatchObject({ url: hook('ticked'), scheduleId });
    await client().schedules.delete(scheduleId);
  });

  it('when /v2/logs is asked with order=earliestFirst or state=IN_PROGRESS, then it answers as QStash’s logs docs say', async () => {
    const { messageId } = await client().publishJSON({ url: hook('ordered'), body: {} });
    await statesOf(messageId, 3);
    const ask = async (query: string) =>
      (
        (await (
          await fetch(`${gateway.queueUrl(target)}/v2/logs?messageId=${messageId}&${query}`, {
            headers: { authorization: `Bearer ${target.token}` },
          })
        ).json()) as { events: MessageEvent[] }
      ).events.map((e) => e.state);
    expect(await ask('order=earliestFirst')).toEqual(['CREATED', 'ACTIVE', 'DELIVERED']);
    expect(await ask('order=latestFirst')).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(await ask('state=IN_PROGRESS')).toEqual(['ACTIVE']);
    const bad = await fetch(`${gateway.queueUrl(target)}/v2/logs?order=sideways`, {
      headers: { authorization: `Bearer ${target.token}` },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe(
      'query parameter order must be latestFirst or earliestFirst',
    );
  });

  it('when a replica records no events (SETTEE_QUEUE_RECORD_EVENTS=false), then what it publishes leaves none', async () => {
    const { messageId } = await client(silent).publishJSON({ url: hook('silent'), body: {}, delay: '1h' });
    await client(silent).messages.cancel(messageId);
    expect((await client().logs({ filter: { messageId } })).logs).toEqual([]);
  });
});
