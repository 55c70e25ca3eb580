import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { queueKeys } from '../../../../gateway/queue/keys.js';
import { createMessage, type QueueMessage } from '../../../../gateway/queue/message.js';
import { MessageStore } from '../../../../gateway/queue/message-store.js';
import { QueueStore } from '../../../../gateway/queue/queues/queue-store.js';
import { connectTestRedis } from '../../../helpers/queue/redis-snapshot.js';

const keys = queueKeys('{t}:');
const quota = { maxQueues: 10, maxParallelism: 100 };

function message(queueName: string, body: string): QueueMessage {
  return createMessage({
    destination: 'https://a.example/',
    method: 'POST',
    headers: {},
    body: Buffer.from(body),
    retries: 0,
    queueName,
  });
}

describe('the queue store: slots in Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  let queues: QueueStore;
  let messages: MessageStore;

  beforeAll(async () => {
    redis = await startRedis();
    client = connectTestRedis(redis);
    queues = new QueueStore(client, keys);
    messages = new MessageStore(client, keys);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });
  beforeEach(() => client.flushdb());

  const enqueue = (name: string, body: string) =>
    queues.enqueue(name, [message(name, body)], { deduplicationWindowMs: 0, quota });
  const started = async (): Promise<string[]> =>
    (await client.xrange(keys.stream, '-', '+')).map(([, fields]) => fields[1]!.split('\n')[1]!);

  it('when many enqueues race on one queue of parallelism 2, then every message is kept and exactly 2 are started, the oldest', async () => {
    await queues.upsert('q', { parallelism: 2, create: true }, quota);
    for (let i = 0; i < 40; i += 1) await enqueue('q', `m${String(i).padStart(2, '0')}`);
    await Promise.all(Array.from({ length: 40 }, (_, i) => enqueue('q', `late${i}`)));
    expect(await started()).toEqual(['m00', 'm01']);
    expect(await client.scard(keys.queueActive('q'))).toBe(2);
    expect(await client.llen(keys.queueWaiting('q'))).toBe(78);
  });

  it('when a started message finished but its release never reached Redis, then the audit frees its slot and starts the next', async () => {
    await enqueue('q', 'first');
    await enqueue('q', 'second');
    const entryId = (await client.xrange(keys.stream, '-', '+'))[0]![0];
    const [firstId] = await client.smembers(keys.queueActive('q'));
    // The delivery is recorded (entry and index gone), then the gateway dies before releasing.
    await messages.ensureGroup();
    await messages.complete(entryId, firstId!);
    expect(await client.scard(keys.queueActive('q'))).toBe(1);
    expect(await queues.audit('q')).toEqual({ freed: 1, started: 1 });
    expect(await started()).toEqual(['second']);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
  });

  it('when a release comes for a message still parked for a retry, or comes twice, then no slot in use is freed', async () => {
    await enqueue('q', 'first');
    await enqueue('q', 'second');
    const [firstId] = await client.smembers(keys.queueActive('q'));
    const entryId = (await client.xrange(keys.stream, '-', '+'))[0]![0];
    await messages.ensureGroup();
    await client.xreadgroup('GROUP', 'settee-delivery', 'c', 'COUNT', 1, 'STREAMS', keys.stream, '>');
    // Another consumer parked it for a retry: it keeps its slot through the retry.
    await messages.scheduleRetry({
      entryId: entryId,
      consumer: 'c',
      message: { ...message('q', 'first'), id: firstId!, retried: 1 },
      dueAt: Date.now() + 60_000,
    });
    await messages.releaseQueueSlot('q', firstId!);
    expect(await client.smembers(keys.queueActive('q'))).toEqual([firstId]);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
    // Cancelled while parked: now the release frees it, once, and the next starts.
    await client.hdel(keys.scheduledMessages, firstId!);
    await client.zrem(keys.schedule, firstId!);
    await messages.releaseQueueSlot('q', firstId!);
    await messages.releaseQueueSlot('q', firstId!);
    expect(await client.scard(keys.queueActive('q'))).toBe(1);
    expect(await started()).toEqual(['second']);
  });

  it('when a paused queue is resumed or its parallelism raised, then it starts what the new room allows', async () => {
    await queues.upsert('q', { parallelism: 1, paused: true, create: true }, quota);
    for (const body of ['a', 'b', 'c']) await enqueue('q', body);
    expect(await started()).toEqual([]);
    await queues.upsert('q', { paused: false, create: false }, quota);
    expect(await started()).toEqual(['a']);
    await queues.upsert('q', { parallelism: 3, create: false }, quota);
    expect(await started()).toEqual(['a', 'b', 'c']);
    expect(await queues.upsert('missing', { paused: true, create: false }, quota)).toBe(false);
    expect(await client.hexists(keys.queues, 'missing')).toBe(0);
  });
});
