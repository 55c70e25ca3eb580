import type { Redis } from 'ioredis';
import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { DELIVERY_GROUP, type QueueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage, type QueueMessage } from '../../../../gateway/queue/core/message.js';
import { decodeMessage } from '../../../../gateway/queue/core/message-codec.js';
import { enqueueMessages } from '../../../../gateway/queue/scripts/enqueue-messages.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { useStoreFixture } from '../../../helpers/queue/store-fixture.js';

describe('the message store in a real Redis', () => {
  const f = useStoreFixture('test');
  let redis: Redis;
  let blocking: Redis;
  let keys: QueueKeys;
  let store: MessageStore;
  beforeEach(() => ({ redis, blocking, keys, store } = f));

  /** EVALSHA calls Redis has answered so far (INFO commandstats), the test's own reads included. */
  const evalshaCalls = async (): Promise<number> =>
    Number(/^cmdstat_evalsha:calls=(\d+)/m.exec(await redis.info('commandstats'))?.[1] ?? 0);

  const message = (n: number, overrides: Partial<QueueMessage> = {}): QueueMessage => ({
    ...createMessage({
      destination: `https://a.example/${n}`,
      method: 'POST',
      headers: { 'x-n': String(n) },
      body: Buffer.from(`body ${n}`),
      retries: 3,
    }),
    ...overrides,
  });

  it('when messages are enqueued, then a consumer reads each one once, whole, in order', async () => {
    const messages = [message(1), message(2), message(3)];
    await store.enqueue([messages[0]!]);
    await store.enqueue(messages.slice(1));
    const entries = await store.readNew(blocking, 'c1', 10, 100);
    expect(entries.map((e) => decodeMessage(e.stored!))).toEqual(messages);
    expect(await store.readNew(blocking, 'c2', 10, 50)).toEqual([]);
  });

  it('when a store has no duplicate, then the script answers one 0, and with one it answers per message; the store answers each message either way', async () => {
    const enqueueKeys = [
      keys.stream,
      keys.streamIndex,
      keys.schedule,
      keys.scheduledMessages,
      keys.deduplicationIds,
      keys.deduplicationExpiries,
      keys.events,
    ];
    const quintuple = (id: string, key: string) => [id, 0, `stored ${id}`, key, ''];
    const run = (...items: (string | number)[][]) =>
      enqueueMessages.run(redis, enqueueKeys, ['m', 60_000, 0, ...items.flat()]);
    expect(await run(quintuple('a', ''), quintuple('b', 'k1'))).toBe(0);
    expect(await run(quintuple('c', ''), quintuple('d', 'k1'))).toEqual(['', 'b']);
    const messages = [
      message(1),
      message(2, { deduplicationKey: 'id:k2' }),
      message(3, { deduplicationKey: 'id:k2' }),
    ];
    expect(await store.enqueue(messages, Date.now(), { deduplicationWindowMs: 60_000 })).toEqual([
      { messageId: messages[0]!.id, deduplicated: false },
      { messageId: messages[1]!.id, deduplicated: false },
      { messageId: messages[1]!.id, deduplicated: true },
    ]);
    expect(await store.enqueue([message(4), message(5)])).toEqual([
      expect.objectContaining({ deduplicated: false }),
      expect.objectContaining({ deduplicated: false }),
    ]);
  });

  it('when the group is ensured twice, then the second call changes nothing and pending entries stay', async () => {
    await store.enqueue([message(1)]);
    await store.readNew(blocking, 'c1', 10, 100);
    await store.ensureGroup();
    const pending = (await redis.xpending(keys.stream, DELIVERY_GROUP)) as [number];
    expect(pending[0]).toBe(1);
  });

  it('when a delivery completes, then its entry is acknowledged and deleted, with its index entry', async () => {
    const sent = message(1);
    await store.enqueue([sent]);
    expect(await redis.hlen(keys.streamIndex)).toBe(1);
    const [entry] = await store.readNew(blocking, 'c1', 10, 100);
    await store.complete(entry!.entryId, sent.id);
    expect(await redis.xlen(keys.stream)).toBe(0);
    expect(await redis.hlen(keys.streamIndex)).toBe(0);
    expect(((await redis.xpending(keys.stream, DELIVERY_GROUP)) as [number])[0]).toBe(0);
  });

  it('when a retry is scheduled, then the message waits off the stream and comes back, with its new count, once due', async () => {
    const original = message(1);
    await store.enqueue([original]);
    const [entry] = await store.readNew(blocking, 'c1', 10, 100);
    const now = Date.now();
    expect(
      await store.scheduleRetry({
        entryId: entry!.entryId,
        consumer: 'c1',
        message: { ...original, retried: 1 },
        dueAt: now + 1_000,
      }),
    ).toBe(true);
    expect(await redis.xlen(keys.stream)).toBe(0);
    expect(await redis.hget(keys.streamIndex, original.id)).toBeNull();
    expect(await store.promoteDueMessages(now + 999, 10)).toBe(0);
    expect(await store.promoteDueMessages(now + 1_000, 10)).toBe(1);
    const [again] = await store.readNew(blocking, 'c1', 10, 100);
    expect(decodeMessage(again!.stored!)).toEqual({ ...original, retried: 1 });
    expect(await redis.hget(keys.streamIndex, original.id)).toBe(again!.entryId);
    expect(await redis.zcard(keys.schedule)).toBe(0);
    expect(await redis.hlen(keys.scheduledMessages)).toBe(0);
  });

  it('when two replicas run the mover, then only the lease holder moves due messages, and the other takes over once the lease lapses', async () => {
    const now = Date.now();
    const [first, second] = [
      { ...message(1), notBefore: now + 10 },
      { ...message(2), notBefore: now + 20 },
    ];
    await store.enqueue([first, second], now);
    // Leases long enough that A's holds through the steps below on a loaded machine.
    const leaseMs = 1_500;
    const a = { name: 'replica-a', leaseMs };
    const b = { name: 'replica-b', leaseMs };
    expect(await store.promoteDueMessages(now + 10, 10, a)).toBe(1);
    expect(await redis.get(keys.moverLease)).toBe('replica-a');
    expect(await store.promoteDueMessages(now + 20, 10, b)).toBe('not-mover');
    expect(await redis.zcard(keys.schedule)).toBe(1);
    // A renews its lease by moving (or finding nothing due); B stays out while it does.
    expect(await store.promoteDueMessages(now + 15, 10, a)).toBe(0);
    expect(Number(await redis.pttl(keys.moverLease))).toBeGreaterThan(leaseMs - 500);
    // A stops (dies): once its lease lapses, B becomes the mover and moves what is due.
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 50));
    expect(await store.promoteDueMessages(now + 20, 10, b)).toBe(1);
    expect(await redis.get(keys.moverLease)).toBe('replica-b');
    expect(await store.promoteDueMessages(now + 20, 10, a)).toBe('not-mover');
    expect(await redis.xlen(keys.stream)).toBe(2);
  });

  it('when a message has a notBefore in the future, then it waits in the schedule and reaches the stream once due', async () => {
    const now = Date.now();
    const delayed = { ...message(1), notBefore: now + 5_000 };
    const past = { ...message(2), notBefore: now - 5_000 };
    await store.enqueue([delayed, past], now);
    expect(await redis.xlen(keys.stream)).toBe(1);
    expect(Number(await redis.zscore(keys.schedule, delayed.id))).toBe(now + 5_000);
    expect(await store.promoteDueMessages(now + 4_999, 10)).toBe(0);
    expect(await store.promoteDueMessages(now + 5_000, 10)).toBe(1);
    const entries = await store.readNew(blocking, 'c1', 10, 100);
    expect(entries.map((e) => decodeMessage(e.stored!).id)).toEqual([past.id, delayed.id]);
  });

  it('when a held entry is deleted (cancelled) before the worker sends, then it is not present and a retry or dead letter of it only acknowledges it', async () => {
    const original = message(1);
    await store.enqueue([original, message(2)]);
    const [first, second] = await store.readNew(blocking, 'c1', 10, 100);
    expect(await store.checkEntry(first!.entryId, original)).toBe('deliver');
    await redis.xdel(keys.stream, first!.entryId, second!.entryId);
    expect(await store.checkEntry(first!.entryId, original)).toBe('gone');
    expect(
      await store.scheduleRetry({
        entryId: first!.entryId,
        consumer: 'c1',
        message: { ...original, retried: 1 },
        dueAt: Date.now(),
      }),
    ).toBe(false);
    const letter = buildDeadLetter({ message: message(2), reason: 'retries-exhausted', failedAt: 1 });
    expect(
      await store.deadLetter({
        entryId: second!.entryId,
        consumer: 'c1',
        letter,
        limits: { retentionMs: 86_400_000, maxCount: 10 },
      }),
    ).toBe(false);
    expect(await redis.zcard(keys.schedule)).toBe(0);
    expect(await redis.hlen(keys.deadLetters)).toBe(0);
    expect(((await redis.xpending(keys.stream, DELIVERY_GROUP)) as [number])[0]).toBe(0);
  });

  it("when a read's entries are checked in one turn, then one script run answers each, and only the present ones record their ACTIVE event", async () => {
    const withEvents = new MessageStore(redis, keys, 100);
    const messages = [message(1), message(2), message(3)];
    await withEvents.enqueue(messages);
    const entries = await withEvents.readNew(blocking, 'c1', 10, 100);
    await redis.xdel(keys.stream, entries[1]!.entryId);
    const evalshaBefore = await evalshaCalls();
    const present = await Promise.all(
      entries.map((entry, i) => withEvents.checkEntry(entry.entryId, messages[i]!)),
    );
    expect(present).toEqual(['deliver', 'gone', 'deliver']);
    expect((await evalshaCalls()) - evalshaBefore).toBe(1);
    const states = (await redis.xrange(keys.events, '-', '+')).map(
      ([, fields]) => JSON.parse(fields[1]!) as { state: string; messageId: string },
    );
    expect(states.filter((e) => e.state === 'ACTIVE').map((e) => e.messageId)).toEqual([
      messages[0]!.id,
      messages[2]!.id,
    ]);
  });

  it('when deliveries finish in separate callbacks of one event-loop pass, then one script run completes them all, each with its index entry and DELIVERED event', async () => {
    const withEvents = new MessageStore(redis, keys, 100);
    const messages = [message(1), message(2), message(3)];
    await withEvents.enqueue(messages);
    const entries = await withEvents.readNew(blocking, 'c1', 10, 100);
    // The third message's entry was finished meanwhile and its index names a newer attempt (its
    // retry back on the stream): this late completion leaves that index entry alone.
    await redis.xdel(keys.stream, entries[2]!.entryId);
    await redis.hset(keys.streamIndex, messages[2]!.id, '0-1');
    const evalshaBefore = await evalshaCalls();
    const now = Date.now();
    // Each receiver's answer is a callback of its own; these run in the same pass, as answers that arrive together do.
    await Promise.all(
      entries.map(
        (entry, i) =>
          new Promise<void>((resolve, reject) =>
            setImmediate(() => {
              withEvents
                .complete(entry.entryId, messages[i]!.id, { message: messages[i]!, now, status: 200 })
                .then(resolve, reject);
            }),
          ),
      ),
    );
    expect((await evalshaCalls()) - evalshaBefore).toBe(1);
    expect(await redis.xlen(keys.stream)).toBe(0);
    expect(((await redis.xpending(keys.stream, DELIVERY_GROUP)) as [number])[0]).toBe(0);
    expect(await redis.hgetall(keys.streamIndex)).toEqual({ [messages[2]!.id]: '0-1' });
    const delivered = (await redis.xrange(keys.events, '-', '+'))
      .map(
        ([, fields]) =>
          JSON.parse(fields[1]!) as { state: string; messageId: string; responseStatus?: number },
      )
      .filter((e) => e.state === 'DELIVERED');
    expect(delivered.map((e) => [e.messageId, e.responseStatus])).toEqual(messages.map((m) => [m.id, 200]));
  });

  it('when a delivery whose entry is still on the stream completes, then its index entry goes without being read first', async () => {
    const sent = message(1);
    await store.enqueue([sent]);
    const [entry] = await store.readNew(blocking, 'c1', 10, 100);
    const hgetCalls = async (): Promise<number> =>
      Number(/^cmdstat_hget:calls=(\d+)/m.exec(await redis.info('commandstats'))?.[1] ?? 0);
    const before = await hgetCalls();
    await store.complete(entry!.entryId, sent.id);
    // The entry was there, so no newer attempt existed: its XDEL says the index entry is its own.
    expect((await hgetCalls()) - before).toBe(0);
    expect(await redis.hlen(keys.streamIndex)).toBe(0);
    expect(await redis.xlen(keys.stream)).toBe(0);
  });

  it('when a consumer that no longer holds an entry schedules a retry or dead-letters it, then nothing changes', async () => {
    await store.enqueue([message(1)]);
    const [entry] = await store.readNew(blocking, 'c1', 10, 100);
    const { entries } = await store.reclaim('c2', 0, '0-0', 10);
    expect(entries.map((e) => e.entryId)).toEqual([entry!.entryId]);
    const stale = { entryId: entry!.entryId, consumer: 'c1' };
    expect(await store.scheduleRetry({ ...stale, message: message(1), dueAt: Date.now() })).toBe(false);
    const letter = buildDeadLetter({
      message: message(1),
      reason: 'retries-exhausted',
      failedAt: Date.now(),
    });
    expect(
      await store.deadLetter({ ...stale, letter, limits: { retentionMs: 86_400_000, maxCount: 10 } }),
    ).toBe(false);
    expect(await redis.zcard(keys.schedule)).toBe(0);
    expect(await redis.hlen(keys.deadLetters)).toBe(0);
    expect(await redis.xlen(keys.stream)).toBe(1);
  });

  it('when messages are dead-lettered, then the queue keeps the newest, capped, and the entries leave the stream', async () => {
    const now = Date.now();
    const messages = [message(1), message(2), message(3)];
    await store.enqueue(messages);
    const entries = await store.readNew(blocking, 'c1', 10, 100);
    for (const [i, entry] of entries.entries()) {
      const letter = buildDeadLetter({
        message: messages[i]!,
        reason: 'retries-exhausted',
        failedAt: now + i,
        lastStatus: 500 + i,
      });
      expect(
        await store.deadLetter({
          entryId: entry.entryId,
          consumer: 'c1',
          letter,
          limits: { retentionMs: 86_400_000, maxCount: 2 },
          now: now + i,
        }),
      ).toBe(true);
    }
    const letters = await store.deadLetters(10);
    expect(letters.map((l) => [l.messageId, l.lastStatus])).toEqual([
      [messages[2]!.id, 502],
      [messages[1]!.id, 501],
    ]);
    expect(Buffer.from(letters[0]!.bodyBase64, 'base64').toString()).toBe('body 3');
    expect(await redis.xlen(keys.stream)).toBe(0);
  });

  it('when an entry has been pending long enough on a dead consumer, then another consumer reclaims it, and not before', async () => {
    await store.enqueue([message(1)]);
    await store.readNew(blocking, 'dead', 10, 100);
    expect((await store.reclaim('alive', 60_000, '0-0', 10)).entries).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const { entries } = await store.reclaim('alive', 50, '0-0', 10);
    expect(entries).toHaveLength(1);
    const pending = (await redis.xpending(keys.stream, DELIVERY_GROUP, '-', '+', 10)) as [string, string][];
    expect(pending.map(([, consumer]) => consumer)).toEqual(['alive']);
  });

  it('when consumers hold nothing and have been idle, then they are pruned, and a consumer with pending entries is kept', async () => {
    await store.enqueue([message(1), message(2)]);
    await store.readNew(blocking, 'holder', 1, 100);
    const [done] = await store.readNew(blocking, 'emptied', 1, 100);
    await store.complete(done!.entryId, '');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await store.pruneIdleConsumers(20, 'me')).toBe(1);
    const consumers = (await redis.call('XINFO', 'CONSUMERS', keys.stream, DELIVERY_GROUP)) as unknown[][];
    expect(consumers.map((c) => c[1])).toEqual(['holder']);
  });
});
