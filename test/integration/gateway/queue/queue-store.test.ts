import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import type { QueueMessage } from '../../../../gateway/queue/core/message.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { QueueStore } from '../../../../gateway/queue/stores/queue-store.js';
import { QueueWakeups } from '../../../../gateway/queue/stores/queue-wakeups.js';
import { PendingMessages } from '../../../../gateway/queue/stores/pending-messages.js';
import { waitFor } from '../../../../local/wait.js';
import { DeadLetterQueue } from '../../../../gateway/queue/stores/dead-letter-queue.js';
import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { buildRetriedMessage } from '../../../../gateway/queue/http/dlq-retry.js';
import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { testMessage } from '../../../helpers/queue/store-fixture.js';

const keys = queueKeys('{t}:');
const quota = { maxQueues: 10, maxParallelism: 100 };

function message(queueName: string, body: string): QueueMessage {
  return testMessage(body, { queueName });
}

describe('the queue store: slots in Redis', () => {
  const db = useGatewayRedis();
  let queues: QueueStore;
  let messages: MessageStore;

  beforeAll(() => {
    queues = new QueueStore(db.redis, keys);
    messages = new MessageStore(db.redis, keys);
  });
  beforeEach(() => db.inspect.flushdb());

  const enqueue = (name: string, body: string) =>
    queues.enqueue(name, [message(name, body)], { deduplicationWindowMs: 0, quota });
  const started = async (): Promise<string[]> =>
    (await db.inspect.xrange(keys.stream, '-', '+')).map(([, fields]) => fields[1]!.split('\n')[1]!);
  /** A message of `queue` dead-lettered after its retries, stored as the DLQ keeps it. */
  const storeDeadLetter = async (queue: string, body: string) => {
    const letter = buildDeadLetter({
      message: message(queue, body),
      reason: 'retries-exhausted',
      failedAt: Date.now(),
    });
    await db.inspect.hset(keys.deadLetters, letter.dlqId, JSON.stringify(letter));
    await db.inspect.zadd(keys.deadLetterOrder, 0, letter.dlqId);
    return letter;
  };

  it('when many enqueues race on one queue of parallelism 2, then every message is kept and exactly 2 are started, the oldest', async () => {
    await queues.upsert('q', { parallelism: 2, create: true }, quota);
    for (let i = 0; i < 40; i += 1) await enqueue('q', `m${String(i).padStart(2, '0')}`);
    await Promise.all(Array.from({ length: 40 }, (_, i) => enqueue('q', `late${i}`)));
    expect(await started()).toEqual(['m00', 'm01']);
    expect(await db.inspect.scard(keys.queueActive('q'))).toBe(2);
    expect(await db.inspect.llen(keys.queueWaiting('q'))).toBe(78);
  });

  it('when a started message finished but its release never reached Redis, then the audit frees its slot and starts the next', async () => {
    await enqueue('q', 'first');
    await enqueue('q', 'second');
    const entryId = (await db.inspect.xrange(keys.stream, '-', '+'))[0]![0];
    const [firstId] = await db.inspect.smembers(keys.queueActive('q'));
    // The delivery is recorded (entry and index gone), then the gateway dies before releasing.
    await messages.ensureGroup();
    await messages.complete(entryId, firstId!);
    expect(await db.inspect.scard(keys.queueActive('q'))).toBe(1);
    expect(await queues.audit('q')).toEqual({ freed: 1, started: 1 });
    expect(await started()).toEqual(['second']);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
  });

  it('when a release comes for a message still parked for a retry, or comes twice, then no slot in use is freed', async () => {
    await enqueue('q', 'first');
    await enqueue('q', 'second');
    const [firstId] = await db.inspect.smembers(keys.queueActive('q'));
    const entryId = (await db.inspect.xrange(keys.stream, '-', '+'))[0]![0];
    await messages.ensureGroup();
    await db.inspect.xreadgroup('GROUP', 'settee-delivery', 'c', 'COUNT', 1, 'STREAMS', keys.stream, '>');
    // Another consumer parked it for a retry: it keeps its slot through the retry.
    await messages.scheduleRetry({
      entryId: entryId,
      consumer: 'c',
      message: { ...message('q', 'first'), id: firstId!, retried: 1 },
      dueAt: Date.now() + 60_000,
    });
    await messages.releaseQueueSlot('q', firstId!);
    expect(await db.inspect.smembers(keys.queueActive('q'))).toEqual([firstId]);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
    // Cancelled while parked: now the release frees it, once, and the next starts.
    await db.inspect.hdel(keys.scheduledMessages, firstId!);
    await db.inspect.zrem(keys.schedule, firstId!);
    await messages.releaseQueueSlot('q', firstId!);
    await messages.releaseQueueSlot('q', firstId!);
    expect(await db.inspect.scard(keys.queueActive('q'))).toBe(1);
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
    expect(await db.inspect.hexists(keys.queues, 'missing')).toBe(0);
  });

  it('when the oldest waiting message is not due yet (Upstash-Delay), then nothing behind it starts either, and both start in order once it is due', async () => {
    await queues.upsert('q', { parallelism: 2, create: true }, quota);
    // Due far enough ahead that the steps below run before it on a loaded machine.
    const delayMs = 1_500;
    const delayed = { ...message('q', 'later'), notBefore: Date.now() + delayMs };
    await queues.enqueue('q', [delayed], { deduplicationWindowMs: 0, quota });
    await enqueue('q', 'next');
    expect(await started()).toEqual([]);
    // The audit reports how long until the held-back oldest message is due, to wake the queue then.
    const held = await queues.audit('q');
    expect(held).toMatchObject({ freed: 0, started: 0 });
    expect(held.waitMs).toBeGreaterThan(0);
    expect(held.waitMs).toBeLessThanOrEqual(delayMs);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, delayed.notBefore - Date.now()) + 100));
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 2 });
    expect(await started()).toEqual(['later', 'next']);
  });

  /**
   * Queue `q` holds 'first' (started) and 'second' (waiting); 'first' finishes with a callback
   * that holds its slot, as the worker does: the callback is on the stream, 'second' still waits.
   */
  const firstMessageWithCallback = async () => {
    await enqueue('q', 'first');
    await enqueue('q', 'second');
    const [firstId] = await db.inspect.smembers(keys.queueActive('q'));
    const callback = { ...message('q', 'callback'), queueName: undefined, holdsSlotOf: 'q' };
    await messages.ensureGroup();
    await messages.enqueueHoldingQueueSlot('q', callback);
    const [firstEntry, callbackEntry] = (await db.inspect.xrange(keys.stream, '-', '+')).map(([id]) => id);
    await messages.complete(firstEntry!, firstId!);
    await messages.releaseQueueSlot('q', firstId!);
    return { callback, callbackEntry: callbackEntry! };
  };

  it("when a queue's message has a callback, then the callback holds a slot past the message's release, and frees it once it finishes", async () => {
    const { callback, callbackEntry } = await firstMessageWithCallback();
    expect(await db.inspect.smembers(keys.queueActive('q'))).toEqual([callback.id]);
    expect(await started()).toEqual(['callback']);
    // The audit keeps it: the callback is still on the stream.
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
    await messages.complete(callbackEntry, callback.id);
    await messages.releaseQueueSlot('q', callback.id);
    expect(await started()).toEqual(['second']);
  });

  it('when queue messages that no worker holds are cancelled in one call across queues, then each gives its slot back and its queue starts its next at once, with no audit', async () => {
    const [a1, a2, b1, b2, c1, c2] = ['a', 'a', 'b', 'b', 'c', 'c'].map((queue, i) =>
      message(queue, `${queue}${(i % 2) + 1}`),
    );
    await messages.ensureGroup();
    const readOne = async (): Promise<string> => {
      await db.inspect.xreadgroup('GROUP', 'settee-delivery', 'w', 'COUNT', 1, 'STREAMS', keys.stream, '>');
      const entries = await db.inspect.xrange(keys.stream, '-', '+');
      return entries[entries.length - 1]![0];
    };
    // c1 is read by a worker, which releases its slot itself once it finds the message gone.
    await queues.enqueue('c', [c1!, c2!], { deduplicationWindowMs: 0, quota });
    const c1Entry = await readOne();
    // b1 is read, then parked for a retry: off the stream, it holds its slot and no worker holds it.
    await queues.enqueue('b', [b1!, b2!], { deduplicationWindowMs: 0, quota });
    const b1Entry = await readOne();
    await messages.scheduleRetry({
      entryId: b1Entry,
      consumer: 'w',
      message: { ...b1!, retried: 1 },
      dueAt: Date.now() + 60_000,
    });
    // a1 is on the stream, never read: deleted by the cancel, no worker ever sees it.
    await queues.enqueue('a', [a1!, a2!], { deduplicationWindowMs: 0, quota });
    expect(await started()).toEqual(['c1', 'a1']);

    // As a cancel by filter passes them: whole, with ids of messages of other queues among them.
    const pending = new PendingMessages(db.redis, keys);
    expect(await pending.cancel([a1!, b1!.id, c1!.id, 'msg_unknown'])).toBe(3);

    expect(await started()).toEqual(['a2', 'b2']);
    expect(await db.inspect.smembers(keys.queueActive('a'))).toEqual([a2!.id]);
    expect(await db.inspect.smembers(keys.queueActive('b'))).toEqual([b2!.id]);
    expect(await db.inspect.smembers(keys.queueActive('c'))).toEqual([c1!.id]);
    expect(await messages.checkEntry(c1Entry, c1!)).toBe('gone');
    await messages.complete(c1Entry, c1!.id);
    await messages.releaseQueueSlot('c', c1!.id);
    expect(await started()).toEqual(['a2', 'b2', 'c2']);
    for (const queue of ['a', 'b', 'c']) expect(await queues.audit(queue)).toEqual({ freed: 0, started: 0 });
  });

  it("when a queue message's callback is cancelled before any worker reads it, then the queue's next message starts at once, with no audit", async () => {
    const { callback } = await firstMessageWithCallback();
    expect(await started()).toEqual(['callback']);

    expect(await new PendingMessages(db.redis, keys).cancel([callback.id])).toBe(1);
    expect(await started()).toEqual(['second']);
    expect(await db.inspect.scard(keys.queueActive('q'))).toBe(1);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
  });

  it('when a cancel frees the slot of a queue whose oldest waiting message is delayed, then the cancel wakes the queue when that one is due', async () => {
    await enqueue('q', 'first');
    // Due well after the cancel below: its four Redis calls are assumed to take under 3 s.
    const delayed = { ...message('q', 'later'), notBefore: Date.now() + 3_000 };
    await queues.enqueue('q', [delayed], { deduplicationWindowMs: 0, quota });
    const [firstId] = await db.inspect.smembers(keys.queueActive('q'));

    // No maintenance pass runs here: only a wake-up armed by the cancel can start it.
    const wakeups = new QueueWakeups(async (queue) => (await queues.audit(queue)).waitMs);
    try {
      expect(await new PendingMessages(db.redis, keys, 0, wakeups).cancel([firstId!])).toBe(1);
      expect(wakeups.size).toBe(1);
      expect(await db.inspect.scard(keys.queueActive('q'))).toBe(0);
      await waitFor(
        'the delayed message started',
        async () => ((await started()).includes('later') ? true : undefined),
        {
          timeoutMs: 15_000,
          intervalMs: 10,
        },
      );
      // Not before its time: the stream entry id's ms are Redis' clock at the start.
      const [entryId] = (await db.inspect.xrange(keys.stream, '-', '+'))[0]!;
      expect(Number(entryId.split('-')[0])).toBeGreaterThanOrEqual(delayed.notBefore);
    } finally {
      wakeups.stop();
    }
  });

  it("when a queue's delayed oldest waiting message is cancelled, then the message behind it starts at once, with no audit, and a delayed one behind it arms the wake-up", async () => {
    const hours = (n: number) => Date.now() + n * 3_600_000;
    // a: a delayed head (hours out) and a plain message behind it.
    const aHead = { ...message('a', 'a-head'), notBefore: hours(2) };
    await queues.enqueue('a', [aHead, message('a', 'a-next')], { deduplicationWindowMs: 0, quota });
    // b: a delayed head, and a delayed message behind it.
    const bHead = { ...message('b', 'b-head'), notBefore: hours(2) };
    const bNext = { ...message('b', 'b-next'), notBefore: hours(3) };
    await queues.enqueue('b', [bHead, bNext], { deduplicationWindowMs: 0, quota });
    expect(await started()).toEqual([]);

    // No maintenance pass runs here: only the cancel's own dispatch can start or arm anything.
    const wakeups = new QueueWakeups(async (queue) => (await queues.audit(queue)).waitMs);
    try {
      expect(await new PendingMessages(db.redis, keys, 0, wakeups).cancel([aHead, bHead])).toBe(2);
      expect(await started()).toEqual(['a-next']);
      expect(await db.inspect.lrange(keys.queueWaiting('a'), 0, -1)).toEqual([]);
      expect(await db.inspect.lrange(keys.queueWaiting('b'), 0, -1)).toEqual([bNext.id]);
      // b's new oldest is delayed: the cancel armed b's wake-up for it (a has nothing left waiting).
      expect(wakeups.size).toBe(1);
      expect(await queues.audit('a')).toEqual({ freed: 0, started: 0 });
    } finally {
      wakeups.stop();
    }
  });

  it("when the queue limit is 0, then upsert, enqueue and a DLQ retry all refuse a new queue, as a schedule's save and tick do", async () => {
    const none = { ...quota, maxQueues: 0 };
    await expect(queues.upsert('q', { parallelism: 1, create: true }, none)).rejects.toThrow(
      QuotaExceededError,
    );
    await expect(
      queues.enqueue('q', [message('q', 'one')], { deduplicationWindowMs: 0, quota: none }),
    ).rejects.toThrow(QuotaExceededError);
    const letter = await storeDeadLetter('q', 'two');
    const dlq = new DeadLetterQueue(db.redis, keys, 0, undefined);
    await expect(
      dlq.retry([{ dlqId: letter.dlqId, message: buildRetriedMessage(letter, {}, Date.now()) }], none),
    ).rejects.toThrow(QuotaExceededError);
    expect(await db.inspect.hlen(keys.queues)).toBe(0);
    expect(await db.inspect.exists(keys.stream, keys.queueWaiting('q'))).toBe(0);
    expect(await db.inspect.hexists(keys.deadLetters, letter.dlqId)).toBe(1);
  });

  it("when a queue's dead letter is retried, then its message joins the end of its queue, which comes back (parallelism 1) if deleted, within the queue quota", async () => {
    const dlq = new DeadLetterQueue(db.redis, keys, 0, undefined);
    const letter = await storeDeadLetter('gone', 'again');
    const retried = buildRetriedMessage(letter, {}, Date.now());
    expect(retried.queueName).toBe('gone');
    await enqueue('busy', 'holds the binding its one queue');
    await expect(dlq.retry([{ dlqId: letter.dlqId, message: retried }], { maxQueues: 1 })).rejects.toThrow(
      QuotaExceededError,
    );
    expect(await db.inspect.hexists(keys.deadLetters, letter.dlqId)).toBe(1);
    expect(await db.inspect.hexists(keys.queues, 'gone')).toBe(0);

    expect(await dlq.retry([{ dlqId: letter.dlqId, message: retried }], { maxQueues: 2 })).toEqual([true]);
    expect(JSON.parse((await db.inspect.hget(keys.queues, 'gone'))!)).toMatchObject({ parallelism: 1 });
    expect(await db.inspect.smembers(keys.queueActive('gone'))).toEqual([retried.id]);
    expect(await started()).toEqual(['holds the binding its one queue', 'again']);
    expect(await db.inspect.hexists(keys.deadLetters, letter.dlqId)).toBe(0);
    // Retried twice at once: once.
    expect(await dlq.retry([{ dlqId: letter.dlqId, message: retried }], { maxQueues: 2 })).toEqual([false]);
  });
});
