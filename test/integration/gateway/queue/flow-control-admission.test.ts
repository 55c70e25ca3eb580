import type { Redis } from 'ioredis';
import { waitFor } from '../../../../local/wait.js';
import { ConsumerLiveness } from '../../../../gateway/queue/stores/consumer-liveness.js';
import type { FlowControl, FlowControlRecord } from '../../../../gateway/queue/core/flow-control.js';
import { FlowControlStore } from '../../../../gateway/queue/stores/flow-control-store.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import type { QueueMessage } from '../../../../gateway/queue/core/message.js';
import { decodeMessage } from '../../../../gateway/queue/core/message-codec.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import type { StreamEntry } from '../../../../gateway/queue/stores/stream-entry.js';
import { PendingMessages } from '../../../../gateway/queue/stores/pending-messages.js';
import { QueueStore } from '../../../../gateway/queue/stores/queue-store.js';
import { QueueWakeups } from '../../../../gateway/queue/stores/queue-wakeups.js';
import { createMemoryLogger } from '../../../helpers/memory-logger.js';
import { connectAsGateway } from '../../../helpers/queue/redis-snapshot.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';
import { InFlightGauge } from '../../../helpers/queue/in-flight-gauge.js';
import { testMessage, useStoreFixture } from '../../../helpers/queue/store-fixture.js';

const quota = { maxQueues: 10, maxParallelism: 100 };

function message(flowControl: FlowControl, body: string, extra: Partial<QueueMessage> = {}): QueueMessage {
  return testMessage(body, { flowControl }, extra);
}

/**
 * Admission at the worker (admit-flow-control-entry.ts) on a real Redis: a flow-control message
 * that reached the stream through its queue (or a schedule, or a DLQ retry) holds no token, so the
 * worker's check before the send moves it into its key instead, and the key's dispatch puts it
 * back holding one; the queue's slot stays held all the while.
 */
describe('admitting flow-control messages that came onto the stream without a token', () => {
  const f = useStoreFixture('admit');
  let flows: FlowControlStore;
  let queues: QueueStore;
  let store: MessageStore;
  const consumer = 'worker-1';

  beforeEach(() => {
    store = new MessageStore(f.redis, f.keys, 100);
    flows = new FlowControlStore(f.redis, f.keys);
    queues = new QueueStore(f.redis, f.keys);
  });

  const bodyOf = (entry: StreamEntry) => decodeMessage(entry.stored!).body.toString();
  const read = async (): Promise<StreamEntry[]> => store.readNew(f.blocking, consumer, 20, 50);
  const onStream = async (): Promise<string[]> =>
    (await f.redis.xrange(f.keys.stream, '-', '+')).map(([, fields]) => fields[1]!.split('\n')[1]!);
  const enqueue = (queue: string, ...batch: QueueMessage[]) =>
    queues.enqueue(queue, batch, { deduplicationWindowMs: 0, quota });
  const check = (entry: StreamEntry) => store.checkEntry(entry.entryId, decodeMessage(entry.stored!));
  const events = async (): Promise<string[]> =>
    (await f.redis.xrange(f.keys.events, '-', '+')).map(
      ([, fields]) => JSON.parse(fields[1]!).state as string,
    );

  it('when a message holds its key token, then it is delivered and its ACTIVE event recorded; without one, then it is admitted to its key and started holding one', async () => {
    await flows.enqueue([message({ key: 'k', parallelism: 5 }, 'published')], { deduplicationWindowMs: 0 });
    const [published] = await read();
    expect(await check(published!)).toBe('deliver');
    expect(await events()).toEqual(['ACTIVE']);

    await queues.upsert('q', { parallelism: 5, create: true }, quota);
    const queued = message({ key: 'k', parallelism: 5 }, 'queued');
    await enqueue('q', queued);
    const [entry] = await read();
    expect(bodyOf(entry!)).toBe('queued');
    expect(await f.redis.sismember(f.keys.flowControlActive('k'), queued.id)).toBe(0);
    expect(await check(entry!)).toBe('admitted');
    // The key started it at once (a free token): a new entry, holding the token and the queue slot.
    const [again] = await read();
    expect(again!.entryId).not.toBe(entry!.entryId);
    expect(await f.redis.sismember(f.keys.flowControlActive('k'), queued.id)).toBe(1);
    expect(await f.redis.sismember(f.keys.queueActive('q'), queued.id)).toBe(1);
    expect(await f.redis.xpending(f.keys.stream, 'settee-delivery')).toEqual([
      2,
      published!.entryId,
      again!.entryId,
      [[consumer, '2']],
    ]);
    expect(await check(again!)).toBe('deliver');
    expect(await events()).toEqual(['ACTIVE', 'ACTIVE']);
  });

  it("when a queue's messages wait in their key, then they keep their queue slots through audits, ticks, stray releases and a retry", async () => {
    await queues.upsert('q', { parallelism: 2, create: true }, quota);
    const [m1, m2, m3] = ['m1', 'm2', 'm3'].map((body) => message({ key: 'one', parallelism: 1 }, body));
    await enqueue('q', m1!, m2!, m3!);
    expect(await onStream()).toEqual(['m1', 'm2']);
    const [e1, e2] = await read();
    expect(await check(e1!)).toBe('admitted');
    expect(await check(e2!)).toBe('admitted');
    // m1 holds the key's one token, m2 waits in the key, m3 in the queue.
    expect(await onStream()).toEqual(['m1']);
    expect(await f.redis.lrange(f.keys.flowControlWaiting('one'), 0, -1)).toEqual([m2!.id]);
    expect(await flows.get('one')).toMatchObject({ parallelismCount: 1, waitListSize: 1 });
    for (let i = 0; i < 2; i += 1) {
      expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
      expect(await flows.tick('one')).toMatchObject({ freed: 0, started: 0, forgotten: false });
      await store.releaseQueueSlot('q', m2!.id);
      await store.releaseFlowControlToken(m2!.flowControl!, m2!.id);
    }
    expect((await f.redis.smembers(f.keys.queueActive('q'))).sort()).toEqual([m1!.id, m2!.id].sort());

    // m1 fails and is parked for a retry in the key's due set: it keeps its queue slot, not its token.
    const [again] = await read();
    const retry = { ...decodeMessage(again!.stored!), retried: 1 };
    expect(
      await store.scheduleRetry({
        entryId: again!.entryId,
        consumer,
        message: retry,
        dueAt: Date.now() + 60_000,
      }),
    ).toBe(true);
    await store.releaseFlowControlToken(m1!.flowControl!, m1!.id);
    expect(await f.redis.zrange(f.keys.flowControlDue('one'), '0', '-1')).toEqual([m1!.id]);
    expect(await onStream()).toEqual(['m2']);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
    await store.releaseQueueSlot('q', m1!.id);
    expect((await f.redis.smembers(f.keys.queueActive('q'))).sort()).toEqual([m1!.id, m2!.id].sort());
    expect(await f.redis.lrange(f.keys.queueWaiting('q'), 0, -1)).toEqual([m3!.id]);
  });

  it("when a message's limits reach its key by admission, then they count among the key's unless pinned", async () => {
    await queues.upsert('q', { parallelism: 10, create: true }, quota);
    await enqueue('q', message({ key: 'lim', parallelism: 3, rate: 7, periodSeconds: 60 }, 'a'));
    expect(await check((await read())[0]!)).toBe('admitted');
    expect(await flows.get('lim')).toMatchObject({
      parallelismMax: 3,
      rateMax: 7,
      ratePeriod: 60,
      rateCount: 1,
    });

    await flows.update('lim', { change: 'pin', parallelism: 9 });
    await enqueue('q', message({ key: 'lim', parallelism: 1, rate: 2, periodSeconds: 60 }, 'b'));
    const [b] = (await read()).filter((entry) => bodyOf(entry) === 'b');
    expect(await check(b!)).toBe('admitted');
    // 'a' is not finished, so its higher rate (7 per minute) still holds beside b's 2.
    expect(await flows.get('lim')).toMatchObject({
      parallelismMax: 9,
      isPinnedParallelism: true,
      rateMax: 7,
    });
  });

  it('when a queue and flow message is cancelled at each stage, then it is never delivered and its slot and token come back', async () => {
    await queues.upsert('q', { parallelism: 2, create: true }, quota);
    const [m1, m2, m3, m4, m5] = ['m1', 'm2', 'm3', 'm4', 'm5'].map((body) =>
      message({ key: 'c', parallelism: 1 }, body, { queueName: 'q' }),
    );
    await enqueue('q', m1!, m2!, m3!, m4!, m5!);
    const pending = new PendingMessages(f.redis, f.keys);
    const [e1, e2] = await read();
    expect(await check(e1!)).toBe('admitted');
    expect(await check(e2!)).toBe('admitted');
    const [e1Token] = await read();

    // Waiting in its queue: m5 is dropped by the queue's dispatch later; never in the key, it
    // leaves the key's counts of unfinished messages (m1 and m2) as they are.
    expect(await pending.cancel([m5!.id])).toBe(1);
    const counts = async () =>
      (JSON.parse((await f.redis.hget(f.keys.flowControls, 'c'))!) as FlowControlRecord).parallelismCounts;
    expect(await counts()).toEqual({ '1': 2 });
    // Waiting in its key: the cancel itself frees its slot and starts m3 (without a token); no
    // slot audit runs here.
    expect(await pending.cancel([m2!.id])).toBe(1);
    expect(await counts()).toEqual({ '1': 1 });
    expect(await onStream()).toEqual(['m1', 'm3']);
    expect((await f.redis.smembers(f.keys.queueActive('q'))).sort()).toEqual([m1!.id, m3!.id].sort());
    const [e3] = await read();
    expect(bodyOf(e3!)).toBe('m3');
    // On the stream before its admission: the worker finds it gone and releases as after a cancel.
    expect(await pending.cancel([m3!.id])).toBe(1);
    expect(await check(e3!)).toBe('gone');
    await store.complete(e3!.entryId, m3!.id);
    await store.releaseQueueSlot('q', m3!.id);
    const [e4] = await read();
    expect(bodyOf(e4!)).toBe('m4');
    expect(await check(e4!)).toBe('admitted');
    // On the stream holding its token, no worker left to release: the audit and the tick free both.
    expect(await pending.cancel([m1!.id])).toBe(1);
    expect(await check(e1Token!)).toBe('gone');
    expect(await queues.audit('q')).toEqual({ freed: 1, started: 0 });
    expect(await flows.tick('c')).toMatchObject({ freed: 1, started: 1 });
    // Parked for a retry in its key's due set.
    const [e4Token] = await read();
    expect(bodyOf(e4Token!)).toBe('m4');
    expect(await check(e4Token!)).toBe('deliver');
    await store.scheduleRetry({
      entryId: e4Token!.entryId,
      consumer,
      message: { ...m4!, retried: 1 },
      dueAt: Date.now() + 60_000,
    });
    await store.releaseFlowControlToken(m4!.flowControl!, m4!.id);
    expect(await pending.find(m4!.id)).toMatchObject({ state: 'scheduled' });
    // Parked, it holds its queue slot, which the cancel frees at once too.
    expect(await f.redis.smembers(f.keys.queueActive('q'))).toEqual([m4!.id]);
    expect(await pending.cancel([m4!.id])).toBe(1);

    expect(await f.redis.scard(f.keys.queueActive('q'))).toBe(0);
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
    expect(await f.redis.llen(f.keys.queueWaiting('q'))).toBe(0);
    expect(await f.redis.hlen(f.keys.scheduledMessages)).toBe(0);
    expect(await f.redis.xlen(f.keys.stream)).toBe(0);
    await f.redis.zadd(f.keys.flowControlDue('c'), 0, m4!.id); // due now: the tick drops it
    expect(await flows.tick('c')).toEqual({ freed: 0, started: 0, forgotten: true });
  });

  it('when a queue and flow message is cancelled on the stream before any worker reads it, then its queue starts its next at once, with no audit', async () => {
    await queues.upsert('q', { parallelism: 1, create: true }, quota);
    const [m1, m2] = ['m1', 'm2'].map((body) =>
      message({ key: 'u', parallelism: 1 }, body, { queueName: 'q' }),
    );
    await enqueue('q', m1!, m2!);
    expect(await onStream()).toEqual(['m1']);

    expect(await new PendingMessages(f.redis, f.keys).cancel([m1!.id])).toBe(1);
    expect(await onStream()).toEqual(['m2']);
    expect(await f.redis.smembers(f.keys.queueActive('q'))).toEqual([m2!.id]);
    const [e2] = await read();
    expect(await check(e2!)).toBe('admitted');
    expect(await queues.audit('q')).toEqual({ freed: 0, started: 0 });
  });

  it('when a cancel frees the slot of a queue whose oldest waiting message is delayed, then the cancel wakes the queue when that one is due', async () => {
    // The key's one token is held by a published message, so the queue's m1 waits in the key.
    await flows.enqueue([message({ key: 'w', parallelism: 1 }, 'published')], { deduplicationWindowMs: 0 });
    await queues.upsert('q', { parallelism: 1, create: true }, quota);
    const m1 = message({ key: 'w', parallelism: 1 }, 'm1', { queueName: 'q' });
    await enqueue('q', m1);
    const [, e1] = await read();
    expect(await check(e1!)).toBe('admitted');
    // Due after the cancel below: the few Redis calls before it are assumed to take under 1.5 s.
    const m2 = testMessage('m2', { queueName: 'q' }, { notBefore: Date.now() + 1_500 });
    await enqueue('q', m2);

    // No maintenance pass runs here: only a wake-up armed by the cancel can start m2.
    const wakeups = new QueueWakeups(async (queue) => (await queues.audit(queue)).waitMs);
    try {
      expect(await new PendingMessages(f.redis, f.keys, 0, wakeups).cancel([m1.id])).toBe(1);
      expect(wakeups.size).toBe(1);
      expect(await f.redis.smembers(f.keys.queueActive('q'))).toEqual([]);
      await waitFor('m2 started', async () => ((await onStream()).includes('m2') ? true : undefined), {
        timeoutMs: 15_000,
        intervalMs: 10,
      });
      // Not before its time: the stream entry id's ms are Redis' clock at the start.
      const entries = await f.redis.xrange(f.keys.stream, '-', '+');
      const [startedId] = entries.find(([, fields]) => fields[1]!.split('\n')[1] === 'm2')!;
      expect(Number(startedId.split('-')[0])).toBeGreaterThanOrEqual(m2.notBefore!);
    } finally {
      wakeups.stop();
    }
  });

  it('when the worker holding an unadmitted entry dies, then the survivor that claims it admits it once', async () => {
    await queues.upsert('q', { parallelism: 1, create: true }, quota);
    const m = message({ key: 'dead', parallelism: 1 }, 'orphan');
    await enqueue('q', m);
    const liveness = new ConsumerLiveness(f.redis, f.keys);
    await liveness.heartbeat('replica-dead');
    const [orphan] = await store.readNew(f.blocking, 'replica-dead', 10, 50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    const claimed = await liveness.claimFromDead('replica-alive', 100, 10);
    expect(claimed?.entries.map((e) => e.entryId)).toEqual([orphan!.entryId]);
    expect(await check(claimed!.entries[0]!)).toBe('admitted');
    // The dead replica, had it only stalled, finds its entry gone; its releases free nothing in use.
    expect(await check(orphan!)).toBe('gone');
    await store.complete(orphan!.entryId, m.id);
    await store.releaseQueueSlot('q', m.id);
    await store.releaseFlowControlToken(m.flowControl!, m.id);
    expect(await f.redis.sismember(f.keys.queueActive('q'), m.id)).toBe(1);
    expect(await f.redis.sismember(f.keys.flowControlActive('dead'), m.id)).toBe(1);
    expect(await onStream()).toEqual(['orphan']);
    const blocking: Redis = connectAsGateway(f.server, { blocking: true });
    try {
      const [held] = await store.readNew(blocking, 'replica-alive', 10, 50);
      expect(await check(held!)).toBe('deliver');
    } finally {
      blocking.disconnect();
    }
  });
});

describe('queues sharing a flow-control key through delivery workers', () => {
  const f = useDeliveryFixture('admit-worker');

  it('when two queues share a key of parallelism 1, then one runs at a time, each queue stays in order, and a retry keeps its queue slot', async () => {
    const { config, store: messages } = f.freshConfig({ workerConcurrency: 8, retryDelayScale: 0.01 });
    const k = queueKeys(config.keyPrefix);
    const queues = new QueueStore(f.redis, k);
    const inFlight = new InFlightGauge();
    let flakyFailed = false;
    f.destination.answer = (request) => {
      void inFlight.heldFor(20);
      if (request.body.toString() === 'a1' && !flakyFailed) {
        flakyFailed = true;
        return { status: 503, delayMs: 20 };
      }
      return { status: 200, delayMs: 20 };
    };
    const limits = { key: 'shared', parallelism: 1 };
    const send = (body: string) =>
      message(limits, body, { destination: `${f.destination.baseUrl}/${body}`, retries: 2 });
    // Parallelism 1: with more, a queue's started messages race to their key through concurrent workers.
    for (const name of ['qa', 'qb']) await queues.upsert(name, { parallelism: 1, create: true }, quota);
    await queues.enqueue('qa', ['a1', 'a2', 'a3'].map(send), { deduplicationWindowMs: 0, quota });
    await queues.enqueue('qb', ['b1', 'b2', 'b3'].map(send), { deduplicationWindowMs: 0, quota });

    f.startWorker({ config, logger: createMemoryLogger('warn').logger });
    await waitFor('every message delivered', async () => f.destination.requests.length === 7 || undefined, {
      timeoutMs: 15_000,
      intervalMs: 25,
    });
    expect(inFlight.most).toBe(1);
    const bodies = f.destination.requests.map((r) => r.body.toString());
    expect(bodies.filter((b) => b.startsWith('a'))).toEqual(['a1', 'a1', 'a2', 'a3']);
    expect(bodies.filter((b) => b.startsWith('b'))).toEqual(['b1', 'b2', 'b3']);
    await waitFor(
      'every slot and token back',
      async () =>
        (await f.redis.exists(k.queueActive('qa'), k.queueActive('qb'), k.flowControlActive('shared'))) ===
          0 || undefined,
      { timeoutMs: 5_000, intervalMs: 25 },
    );
    expect(await messages.deadLetters(10)).toEqual([]);
  });
});
