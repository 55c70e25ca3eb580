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
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * Every bulk route acts on exactly what a request names (ids in the query or in a JSON body,
 * filters, or every item a page at a time) and refuses a request it cannot read, changing
 * nothing: a body it does not understand is never taken for "no selection", which would widen
 * the request to every message. The JSON bodies are shaped as the Python SDK (`qstash` 3.x)
 * sends them; what the TypeScript SDK calls goes through the SDK.
 */
describe('bulk cancel, delete and retry name exactly what they act on', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let inspect: Redis;

  const client = (): Client => queueSdkClient(gateway, target);
  const hook = (name: string) => `${destination.baseUrl}/hooks/${name}`;

  /** A raw request shaped as the Python SDK sends its bulk calls: a JSON body with Content-Type. */
  const api = (path: string, method: string, body?: string) =>
    fetch(`${gateway.queueUrl(target)}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body }),
    });

  async function deadLetters(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1)
      ids.push((await client().publishJSON({ url: hook('failing'), body: { i }, retries: 0 })).messageId);
    const letters = await waitFor(
      'the dead letters',
      async () => {
        const { messages } = await client().dlq.listMessages({ count: 1_000 });
        return ids.every((id) => messages.some((m) => m.messageId === id)) ? messages : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    return ids.map((id) => letters.find((m) => m.messageId === id)!.dlqId);
  }

  async function delayedMessages(count: number, label = 'bulk'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1)
      ids.push(
        (await client().publishJSON({ url: hook('later'), body: { i }, delay: 3_600, label })).messageId,
      );
    return ids;
  }

  const dlqIds = async () => (await client().dlq.listMessages({ count: 1_000 })).messages.map((m) => m.dlqId);

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    target = testQueueTarget(redis, { namespace: 'tenant-a', name: 'bulk' });
    inspect = connectTestRedis(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target] });
  });

  afterAll(async () => {
    await gateway?.stop();
    await destination?.close();
    inspect?.disconnect();
    await redis?.stop();
  });

  beforeEach(async () => {
    destination.answer = () => ({ status: 503 });
    await client().messages.cancel({ all: true, count: 1_000 });
    let cursor: string | undefined;
    do ({ cursor } = await client().dlq.delete({ all: true, count: 1_000, cursor }));
    while (cursor);
  });

  it('when the Python SDK deletes one dead letter of three by a dlqIds body, then only that one is deleted', async () => {
    const [a, b, c] = await deadLetters(3);
    const response = await api('/v2/dlq', 'DELETE', JSON.stringify({ dlqIds: [b, 'unknown'] }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ deleted: 1 });
    expect((await dlqIds()).sort()).toEqual([a, c].sort());
  });

  it('when dead letters are retried by a dlqIds body, then only those are sent again', async () => {
    const [a, b] = await deadLetters(2);
    destination.answer = () => ({ status: 200 });
    const response = await api('/v2/dlq/retry', 'POST', JSON.stringify({ dlqIds: [a] }));
    expect(response.status).toBe(200);
    const { responses } = (await response.json()) as { responses: { messageId: string }[] };
    expect(responses).toHaveLength(1);
    expect(await dlqIds()).toEqual([b]);
  });

  it('when the SDK deletes and retries by ids, then only those letters are touched', async () => {
    const [a, b, c] = await deadLetters(3);
    expect(await client().dlq.delete({ dlqIds: [a!] })).toMatchObject({ deleted: 1 });
    destination.answer = () => ({ status: 200 });
    expect((await client().dlq.retry([b!])).responses).toHaveLength(1);
    expect(await dlqIds()).toEqual([c]);
  });

  it('when the Python SDK cancels one message of three by a messageIds body, then only that one is cancelled', async () => {
    const [a, b, c] = await delayedMessages(3);
    const response = await api('/v2/messages', 'DELETE', JSON.stringify({ messageIds: [b] }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cancelled: 1 });
    for (const [id, found] of [
      [a, 200],
      [b, 404],
      [c, 200],
    ] as const)
      expect((await api(`/v2/messages/${id}`, 'GET')).status).toBe(found);
  });

  it('when the Python SDK cancels all with no body and no query, then every pending message is cancelled', async () => {
    await delayedMessages(2);
    const response = await api('/v2/messages', 'DELETE');
    expect(await response.json()).toEqual({ cancelled: 2 });
  });

  it('when a bulk cancel gives a count, then it still cancels every match, as SDK 2.12 documents QStash does', async () => {
    // SDK 2.12 sends count=100 with every cancel({all: true}) and promises one call cancels all.
    const many = await delayedMessages(101, 'counted');
    expect(await client().messages.cancel({ all: true })).toEqual({ cancelled: many.length });
    const [a, b] = await delayedMessages(2, 'counted');
    expect(await client().messages.cancel({ filter: { label: 'counted' }, count: 1 })).toEqual({
      cancelled: 2,
    });
    const [c, d] = await delayedMessages(2, 'by-ids');
    const byIds = await api(`/v2/messages?messageIds=${c}&messageIds=${d}&count=1`, 'DELETE');
    expect(await byIds.json()).toEqual({ cancelled: 2 });
    for (const id of [a, b, c, d]) expect((await api(`/v2/messages/${id}`, 'GET')).status).toBe(404);
  });

  it('when a DLQ delete or retry by ids gives a count, then it takes at most that many', async () => {
    const [a, b, c] = await deadLetters(3);
    const deleted = await api(`/v2/dlq?dlqIds=unknown&dlqIds=${a}&dlqIds=${b}&count=1`, 'DELETE');
    expect(await deleted.json()).toEqual({ deleted: 1 });
    expect((await dlqIds()).sort()).toEqual([b, c].sort());
    destination.answer = () => ({ status: 200 });
    const retried = await api(`/v2/dlq/retry?dlqIds=${b}&dlqIds=${c}&count=1`, 'POST');
    expect(((await retried.json()) as { responses: unknown[] }).responses).toHaveLength(1);
    expect(await dlqIds()).toEqual([c]);
  });

  it.each([
    ['DELETE', '/v2/dlq', '{"ids": ["x"]}', /unknown body field "ids"/],
    ['DELETE', '/v2/dlq', '{"dlqIds": [', /the body is not valid JSON/],
    ['DELETE', '/v2/dlq', '{}', /body field dlqIds is missing/],
    ['DELETE', '/v2/dlq', '{"dlqIds": []}', /dlqIds is empty/],
    ['DELETE', '/v2/dlq', '["x"]', /must be a JSON object/],
    ['DELETE', '/v2/dlq', undefined, /names no dead letters/],
    ['DELETE', '/v2/dlq?label=x', '{"dlqIds": ["x"]}', /in the query or in the body, not both/],
    ['POST', '/v2/dlq/retry', '{"messageIds": ["x"]}', /unknown body field "messageIds"/],
    ['POST', '/v2/dlq/retry', '{"dlqIds": "x"}', /dlqIds must be an array of ids/],
    ['POST', '/v2/dlq/retry', undefined, /names no dead letters/],
    ['DELETE', '/v2/dlq?cursor=1700000000000-0000abcd', undefined, /names no dead letters/],
    ['POST', '/v2/dlq/retry?cursor=1700000000000-0000abcd', undefined, /names no dead letters/],
    ['DELETE', '/v2/messages', '{"dlqIds": ["x"]}', /unknown body field "dlqIds"/],
    ['DELETE', '/v2/messages', '{}', /body field messageIds is missing/],
    ['DELETE', '/v2/messages', '{"messageIds": []}', /messageIds is empty/],
    ['DELETE', '/v2/messages', 'messageIds=x', /the body is not valid JSON/],
    ['DELETE', '/v2/messages?cursor=1', undefined, /query parameter cursor does not apply to a cancel/],
    ['DELETE', '/v2/topics/group/endpoints', '{"endpoints": []}', /must NOT have fewer than 1 items/],
    ['DELETE', '/v2/topics/group/endpoints', '{"endpoints": [{}]}', /needs a url or a name/],
    ['DELETE', '/v2/topics/group/endpoints', '{}', /must have required property 'endpoints'/],
  ])(
    'when %s %s has the body %s, then it is a 400 and nothing changes',
    async (method, path, body, error) => {
      await deadLetters(2);
      await delayedMessages(2);
      await client().urlGroups.addEndpoints({
        name: 'group',
        endpoints: [{ url: hook('a') }, { url: hook('b') }],
      });
      const before = await snapshotDatabase(inspect);
      const response = await api(path, method, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(error);
      expect(await snapshotDatabase(inspect)).toEqual(before);
    },
  );
});
