import { Client } from '@upstash/qstash';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';

/**
 * The SDK's logs()/events() (GET /v2/events) and the documented GET /v2/logs, on the states the
 * queue records as messages are published, delivered, retried, dead-lettered and cancelled.
 */
describe('events through the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let silent: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;

  const client = (of: TestQueueGateway = gateway, token = target.token): Client =>
    new Client({ baseUrl: of.queueUrl(target), token, retry: false, enableTelemetry: false });
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
    redis = await startRedis();
    destination = await startRecordingDestination();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache' });
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target] });
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
    await redis?.stop();
  });

  beforeEach(() => {
    destination.answer = (request) =>
      request.path.startsWith('/hooks/fail') ? { status: 500 } : { status: 200 };
  });

  it('when a message is delivered, then its CREATED, ACTIVE and DELIVERED events come newest first', async () => {
    const before = Date.now();
    const { messageId } = await client().publishJSON({ url: hook('ok'), body: {}, label: 'orders' });
    const logs = await statesOf(messageId, 3);
    expect(logs.map((l) => l.state)).toEqual(['DELIVERED', 'ACTIVE', 'CREATED']);
    expect(logs[2]).toMatchObject({ messageId, url: hook('ok'), label: 'orders', labels: ['orders'] });
    expect(logs[2]!.time).toBeGreaterThanOrEqual(before);
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
      ['/v2/events?queueName=q', /filter queueName is not supported/],
    ] as const) {
      const response = await ask(path);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(message);
    }
    const wrongToken = await fetch(`${gateway.queueUrl(target)}/v2/events`, {
      headers: { authorization: 'Bearer another-bindings-token' },
    });
    expect(wrongToken.status).toBe(401);
  });

  it('when a replica records no events (SETTEE_QUEUE_RECORD_EVENTS=false), then what it publishes leaves none', async () => {
    const { messageId } = await client(silent).publishJSON({ url: hook('silent'), body: {}, delay: '1h' });
    await client(silent).messages.cancel(messageId);
    expect((await client().logs({ filter: { messageId } })).logs).toEqual([]);
  });
});
