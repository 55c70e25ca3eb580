import type { Client } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
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

/**
 * The SDK's DLQ API (listMessages, delete, deleteMany, retry) and the routes it does not call
 * (GET and POST retry of one dlqId, as documented), on messages that failed for real against a
 * loopback destination, with the binding's retention limits.
 */
describe('the dead-letter queue through the @upstash/qstash SDK', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let capped: QueueTarget;
  let inspect: Redis;

  const client = (of: QueueTarget = target, token = of.token): Client => queueSdkClient(gateway, of, token);
  const hook = (name: string) => `${destination.baseUrl}/hooks/${name}`;

  /** Publishes messages that fail at once (no retries) and waits until each is a dead letter. */
  async function deadLetters(
    count: number,
    options: { of?: QueueTarget; label?: string | string[]; name?: string } = {},
  ) {
    const of = options.of ?? target;
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const { messageId } = await client(of).publishJSON({
        url: hook(options.name ?? 'failing'),
        body: { i },
        retries: 0,
        ...(options.label && { label: options.label }),
      });
      ids.push(messageId);
    }
    await waitFor(
      'the dead letters',
      async () => {
        const { messages } = await client(of).dlq.listMessages({ count: 1_000 });
        return ids.every((id) => messages.some((m) => m.messageId === id)) ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    return ids;
  }

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${gateway.queueUrl(target)}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${target.token}`, ...init.headers },
    });

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'cache' });
    capped = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'capped',
      db: 1,
      limits: { maxDeadLetters: 3, deadLetterRetentionMs: 3_000 },
    });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target, capped] });
  });

  afterAll(async () => {
    await gateway?.stop();
    await destination?.close();
    inspect?.disconnect();
    await redis?.stop();
  });

  beforeEach(async () => {
    destination.answer = () => ({ status: 503, headers: { 'x-why': 'down' } });
    let cursor: string | undefined;
    do {
      ({ cursor } = await client().dlq.delete({ all: true, count: 1_000, cursor }));
    } while (cursor);
  });

  it('when a message with two labels fails for good, then listMessages shows it with its last response and labels, newest first, and a filter on either label finds it', async () => {
    const [first, second] = await deadLetters(2, { label: ['orders', 'eu'] });
    const { messages, cursor } = await client().dlq.listMessages();
    expect(cursor).toBeUndefined();
    expect(messages.map((m) => m.messageId)).toEqual([second, first]);
    expect(messages[0]).toMatchObject({
      messageId: second,
      url: hook('failing'),
      method: 'POST',
      body: '{"i":1}',
      maxRetries: 0,
      label: 'orders',
      labels: ['orders', 'eu'],
      responseStatus: 503,
      responseBody: 'answer',
    });
    expect(messages[0]!.dlqId).toMatch(/^\d{13}-[0-9a-f]{8}$/);
    expect(messages[0]!.notBefore).toBe(messages[0]!.createdAt);
    expect(messages[0]!.responseHeader).toMatchObject({ 'x-why': ['down'] });
    expect(messages[0]!.header).toMatchObject({ 'content-type': ['application/json'] });

    const one = await api(`/v2/dlq/${messages[0]!.dlqId}`);
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ dlqId: messages[0]!.dlqId, messageId: second });
    const byLabel = await client().dlq.listMessages({ filter: { label: 'eu' } });
    expect(byLabel.messages.map((m) => m.messageId)).toEqual([second, first]);
  });

  it('when a client sends header names in its own case (as the Python SDK does), then messages, dead letters, events and schedules answer them in that case', async () => {
    const spelled = { 'Content-Type': ['text/plain'], 'Test-Header': ['yes'] };
    const sent = { 'Content-Type': 'text/plain', 'Upstash-Forward-Test-Header': 'yes' };
    const delayed = await api(`/v2/publish/${hook('spelled')}`, {
      method: 'POST',
      headers: { ...sent, 'Upstash-Delay': '1h' },
      body: 'x',
    });
    const { messageId: waiting } = (await delayed.json()) as { messageId: string };
    expect((await client().messages.get(waiting)).header).toEqual(spelled);
    const [batched] = (await (
      await api('/v2/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ destination: hook('spelled'), headers: { ...sent, 'Upstash-Delay': '1h' } }]),
      })
    ).json()) as { messageId: string }[];
    expect((await client().messages.get(batched!.messageId)).header).toEqual(spelled);
    const created = await api(`/v2/schedules/${hook('spelled')}`, {
      method: 'POST',
      headers: { ...sent, 'Upstash-Cron': '0 0 1 1 *' },
      body: 'x',
    });
    const { scheduleId } = (await created.json()) as { scheduleId: string };
    expect((await client().schedules.get(scheduleId)).header).toEqual(spelled);
    await client().schedules.delete(scheduleId);

    const failed = await api(`/v2/publish/${hook('spelled')}`, {
      method: 'POST',
      headers: { ...sent, 'Upstash-Retries': '0' },
      body: 'x',
    });
    const { messageId } = (await failed.json()) as { messageId: string };
    const letter = await waitFor(
      'the dead letter',
      async () => (await client().dlq.listMessages({ filter: { messageId } })).messages[0],
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(letter.header).toEqual(spelled);
    const { logs } = await client().logs({ filter: { messageId, state: 'CREATED' } });
    expect(logs[0]!.header).toEqual(spelled);
    await client().messages.cancel([waiting, batched!.messageId]);
  });

  it('when the queue is paged with a count, then following the cursor gives every letter once', async () => {
    const ids = await deadLetters(5);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client().dlq.listMessages({ count: 2, ...(cursor && { cursor }) });
      seen.push(...page.messages.map((m) => m.messageId));
      cursor = page.cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect([...seen].sort()).toEqual([...ids].sort());
  });

  it('when filters or dlqIds are given, then only the matching letters are listed', async () => {
    const [red] = await deadLetters(1, { label: 'red', name: 'red' });
    const [blue] = await deadLetters(1, { label: 'blue', name: 'blue' });
    const byLabel = await client().dlq.listMessages({ filter: { label: 'red' } });
    expect(byLabel.messages.map((m) => m.messageId)).toEqual([red]);
    const byUrl = await client().dlq.listMessages({ filter: { url: hook('blue'), responseStatus: 503 } });
    expect(byUrl.messages.map((m) => m.messageId)).toEqual([blue]);
    expect((await client().dlq.listMessages({ filter: { responseStatus: 500 } })).messages).toEqual([]);
    const blueLetter = byUrl.messages[0]!;
    const byId = await client().dlq.listMessages({ dlqIds: [blueLetter.dlqId] });
    expect(byId.messages.map((m) => m.messageId)).toEqual([blue]);
  });

  it('when letters are deleted by id, by ids, by filter and all, then each answers how many it deleted', async () => {
    await deadLetters(2, { label: 'keep' });
    await deadLetters(2, { label: 'drop' });
    const { messages } = await client().dlq.listMessages();
    const [a, b] = messages.filter((m) => m.label === 'keep');
    expect(await client().dlq.delete(a!.dlqId)).toEqual({ deleted: 1 });
    await expect(quietly(() => client().dlq.delete(a!.dlqId))).rejects.toThrow(/not found/);
    expect(await client().dlq.deleteMany({ dlqIds: [b!.dlqId, 'unknown'] })).toMatchObject({ deleted: 1 });
    expect(await client().dlq.delete({ filter: { label: 'drop' } })).toMatchObject({ deleted: 2 });
    await deadLetters(3);
    expect(await client().dlq.delete({ all: true })).toMatchObject({ deleted: 3 });
    expect((await client().dlq.listMessages()).messages).toEqual([]);
  });

  it('when a letter is retried, then it leaves the queue and is delivered again as a new message', async () => {
    const [messageId] = await deadLetters(1, { name: 'later' });
    destination.answer = () => ({ status: 200 });
    const { messages } = await client().dlq.listMessages();
    const { responses } = await client().dlq.retry(messages[0]!.dlqId);
    expect(responses).toHaveLength(1);
    expect(responses[0]!.messageId).not.toBe(messageId);
    await waitFor('the retried delivery', async () => destination.attemptsOf(responses[0]!.messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect((await client().dlq.listMessages()).messages).toEqual([]);
    expect(destination.attemptsOf(responses[0]!.messageId)[0]!.body.toString()).toBe('{"i":0}');
  });

  it('when a retry request carries publish headers, then they override what the letter stored', async () => {
    await deadLetters(1, { name: 'override' });
    destination.answer = () => ({ status: 200 });
    const [letter] = (await client().dlq.listMessages()).messages;
    const response = await api(`/v2/dlq/retry/${letter!.dlqId}`, {
      method: 'POST',
      headers: { 'Upstash-Forward-X-Replayed': 'yes', 'Upstash-Method': 'PUT' },
    });
    expect(response.status).toBe(200);
    const { messageId } = (await response.json()) as { messageId: string };
    const attempt = await waitFor('the retried delivery', async () => destination.attemptsOf(messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect(attempt.method).toBe('PUT');
    expect(attempt.headers['x-replayed']).toBe('yes');
    expect(attempt.headers['content-type']).toBe('application/json');
  });

  it('when letters are retried by filter, then the matching ones are sent again', async () => {
    await deadLetters(2, { label: 'again', name: 'ok-filter' });
    await deadLetters(1, { label: 'stay' });
    destination.answer = (request) =>
      request.path.startsWith('/hooks/ok') ? { status: 200 } : { status: 503 };
    const { responses, cursor } = await client().dlq.retry({ filter: { label: 'again' } });
    expect(cursor).toBeUndefined();
    expect(responses).toHaveLength(2);
    const left = await client().dlq.listMessages();
    expect(left.messages.map((m) => m.label)).toEqual(['stay']);
  });

  it('when the binding caps its dead letters and their age, then the oldest beyond the cap and the expired ones are dropped', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const { messageId } = await client(capped).publishJSON({
        url: hook('capped'),
        body: { i },
        retries: 0,
      });
      ids.push(messageId);
      await waitFor(
        'the dead letter',
        async () => {
          const { messages } = await client(capped).dlq.listMessages();
          return messages.some((m) => m.messageId === messageId) ? messages : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
    }
    const { messages } = await client(capped).dlq.listMessages();
    expect(messages.map((m) => m.messageId)).toEqual(ids.slice(1).reverse());
    await waitFor(
      'the retention to drop them',
      async () => ((await client(capped).dlq.listMessages()).messages.length === 0 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 50 },
    );
  });

  it.each([
    ['/v2/dlq?cursor=nonsense', 'GET', 400, /cursor "nonsense" is not a cursor this API gave/],
    ['/v2/dlq?count=0', 'GET', 400, /count must be a whole number from 1 to 1000/],
    ['/v2/dlq?fromDate=today', 'GET', 400, /fromDate must be a whole number/],
    ['/v2/dlq?workflowRunId=e', 'DELETE', 400, /filter workflowRunId is not supported/],
    ['/v2/dlq?colour=red', 'POST', 405, /method not allowed/],
    ['/v2/dlq/123-abc', 'GET', 404, /dead letter 123-abc not found/],
    ['/v2/dlq/retry/123-abc', 'POST', 404, /dead letter 123-abc not found/],
  ])('when %s is asked with %s, then it is %d and nothing changes', async (path, method, status, message) => {
    await deadLetters(1);
    const before = await snapshotDatabase(inspect);
    const response = await api(path, { method });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
    expect(await snapshotDatabase(inspect)).toEqual(before);
  });

  it("when another binding's token is used, then every DLQ route is 401", async () => {
    await deadLetters(1);
    const other = client(target, capped.token + 'x');
    await expect(quietly(() => other.dlq.listMessages())).rejects.toThrow(/invalid token/);
    await expect(quietly(() => other.dlq.delete({ all: true }))).rejects.toThrow(/invalid token/);
    await expect(quietly(() => other.dlq.retry({ all: true }))).rejects.toThrow(/invalid token/);
    expect((await client().dlq.listMessages()).messages).toHaveLength(1);
  });
});
