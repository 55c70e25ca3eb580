import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import type { QueueMessage } from '../../../../gateway/queue/core/message.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { DeadLetterQueue } from '../../../../gateway/queue/stores/dead-letter-queue.js';
import { buildRetriedMessage } from '../../../../gateway/queue/http/dlq-retry.js';
import { QueueStore, queueWakeupsOf } from '../../../../gateway/queue/stores/queue-store.js';
import { QueueWakeups } from '../../../../gateway/queue/stores/queue-wakeups.js';
import { waitFor } from '../../../../local/wait.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { testMessage } from '../../../helpers/queue/store-fixture.js';

const keys = queueKeys('{t}:');
const quota = { maxQueues: 100, maxParallelism: 100 };
/**
 * How late after its due time a start still counts as the wake-up's. Nothing else starts a queue
 * here, so a start at all is the wake-up's; this bound only catches one armed for the wrong time,
 * and the tests space their due times further apart than it. It is wide because a loaded CI
 * machine can run a due timer hundreds of ms late.
 */
const ON_TIME_MS = 2_000;
/**
 * How far ahead the tests that arm a wake-up by another path (an audit, a release, a resume) set
 * the held message's due time: that path must find it not yet due, so the few Redis calls before
 * it (an enqueue, then the audit, release, resume or retry) are assumed to take under 1.5 s.
 */
const HELD_MS = 1_500;

function delayed(queueName: string, body: string, notBefore: number): QueueMessage {
  return testMessage(body, { queueName }, { notBefore });
}

/**
 * A queue's delayed oldest message starts at its due time on a live replica (queue-wakeups.ts),
 * with no maintenance pass running in these tests: without the wake-up nothing would start it.
 */
describe('the wake-ups of queues held back by a delayed message (real Redis)', () => {
  const db = useGatewayRedis();

  /** Each started message's body and when it reached the stream (the entry id's ms, Redis' clock). */
  const started = async (): Promise<{ body: string; at: number }[]> =>
    (await db.inspect.xrange(keys.stream, '-', '+')).map(([id, fields]) => ({
      body: fields[1]!.split('\n')[1]!,
      at: Number(id.split('-')[0]),
    }));
  const waitForStarted = (count: number) =>
    waitFor(
      `${count} started`,
      async () => ((await db.inspect.xlen(keys.stream)) >= count ? true : undefined),
      {
        timeoutMs: 15_000,
        intervalMs: 20,
      },
    );
  /** Waits for `message`, the only one to start, and checks it started at its due time, not before. */
  const expectStartedOnTime = async (message: QueueMessage) => {
    await waitForStarted(1);
    const [start] = await started();
    expect(start!.body).toBe(message.body.toString('utf8'));
    expect(start!.at).toBeGreaterThanOrEqual(message.notBefore!);
    expect(start!.at - message.notBefore!).toBeLessThan(ON_TIME_MS);
  };
  /** A replica's connection, with this replica's wake-ups (as the gateway's shared connection has). */
  const replica = () => {
    const connection = db.connect();
    const wakeups = queueWakeupsOf(connection, keys, { delayWakeups: true })!;
    return { store: new QueueStore(connection, keys, 0, wakeups), wakeups, connection };
  };

  beforeEach(() => db.inspect.flushdb());

  it('when delayed messages are enqueued into one queue, then one wake-up is armed and each starts at its own due time, in order', async () => {
    const { store, wakeups } = replica();
    const now = Date.now();
    const first = delayed('q', 'first', now + 1_000);
    // Further apart than ON_TIME_MS: a wake-up armed for the second would start the first late.
    const second = delayed('q', 'second', now + 1_000 + 2 * ON_TIME_MS);
    await store.enqueue('q', [first], { deduplicationWindowMs: 0, quota });
    await store.enqueue('q', [second], { deduplicationWindowMs: 0, quota });
    expect(wakeups.size).toBe(1);
    expect(await started()).toEqual([]);

    await store.upsert('q', { parallelism: 2, create: false }, quota);
    await waitForStarted(2);
    const [a, b] = await started();
    expect([a!.body, b!.body]).toEqual(['first', 'second']);
    // Not before its time (Redis' clock), and on time: no audit ran to start them.
    expect(a!.at).toBeGreaterThanOrEqual(first.notBefore!);
    expect(a!.at - first.notBefore!).toBeLessThan(ON_TIME_MS);
    expect(b!.at).toBeGreaterThanOrEqual(second.notBefore!);
    expect(b!.at - second.notBefore!).toBeLessThan(ON_TIME_MS);
    expect(wakeups.size).toBe(0);
  });

  it('when a later-due message blocks an earlier-due one behind it (FIFO), then the wake-up moves to the head and both start at its time', async () => {
    const connection = db.connect();
    // queueWakeupsOf's dispatch (the audit), recording what each run reported, so that the test
    // looks once the early wake-up has run rather than after a guessed sleep.
    const reported: (number | undefined)[] = [];
    const wakeups = new QueueWakeups(async (queue) => {
      const { waitMs } = await new QueueStore(connection, keys).audit(queue);
      reported.push(waitMs);
      return waitMs;
    });
    const store = new QueueStore(connection, keys, 0, wakeups);
    const now = Date.now();
    await store.upsert('q', { parallelism: 5, create: true }, quota);
    // The head is due seconds after the one behind it, so the early wake-up at 200 ms runs well
    // before the head is due unless its timer runs more than 4.5 s late.
    const head = delayed('q', 'head', now + 5_000);
    await store.enqueue('q', [head, delayed('q', 'behind', now + 200)], { deduplicationWindowMs: 0, quota });
    expect(wakeups.size).toBe(1);
    await waitFor('the early wake-up to run', async () => (reported.length > 0 ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    // At 200 ms the wake-up found the head not due, started nothing, and re-armed for the head.
    expect(reported[0]).toBeGreaterThan(0);
    expect(await started()).toEqual([]);
    expect(wakeups.size).toBe(1);
    await waitForStarted(2);
    const starts = await started();
    expect(starts.map((s) => s.body)).toEqual(['head', 'behind']);
    for (const { at } of starts) {
      expect(at).toBeGreaterThanOrEqual(head.notBefore!);
      expect(at - head.notBefore!).toBeLessThan(ON_TIME_MS);
    }
    wakeups.stop();
  });

  it('when many queues each hold delayed messages, then there is one wake-up per queue, not per message', async () => {
    const { store, wakeups } = replica();
    // Due 30 s out: no wake-up fires (and leaves the count) while the 100 enqueues run unless they
    // take that long. That each wake-up starts its queue is the first test's to show.
    const dueAt = Date.now() + 30_000;
    for (let q = 0; q < 20; q += 1)
      for (let m = 0; m < 5; m += 1)
        await store.enqueue(`q${q}`, [delayed(`q${q}`, `m${m}`, dueAt + 20 * m)], {
          deduplicationWindowMs: 0,
          quota,
        });
    expect(wakeups.size).toBe(20);
    expect(await db.inspect.xlen(keys.stream)).toBe(0);
    wakeups.stop();
  });

  it('when the replica that enqueued dies, then another replica whose audit found the held-back queue starts it at its due time', async () => {
    const enqueuer = replica();
    const survivor = replica();
    const message = delayed('q', 'orphan', Date.now() + HELD_MS);
    await enqueuer.store.enqueue('q', [message], { deduplicationWindowMs: 0, quota });
    enqueuer.wakeups.stop();
    enqueuer.connection.disconnect();

    // The survivor's maintenance pass: its audit reports the wait, and it arms its own wake-up.
    const { waitMs } = await survivor.store.audit('q');
    expect(waitMs).toBeGreaterThan(0);
    survivor.wakeups.wakeIn('q', waitMs!);
    await waitForStarted(1);
    const [start] = await started();
    expect(start!.at).toBeGreaterThanOrEqual(message.notBefore!);
    expect(start!.at - message.notBefore!).toBeLessThan(ON_TIME_MS);
  });

  it('when a release starts messages up to a delayed one, then the release wakes the queue when that one is due', async () => {
    const { connection, wakeups } = replica();
    // Enqueued by a store without wake-ups: only the release can arm one here.
    const store = new QueueStore(connection, keys);
    const now = Date.now();
    const head = { ...delayed('q', 'first', now), notBefore: undefined };
    const held = delayed('q', 'held', now + HELD_MS);
    await store.enqueue('q', [head, held], { deduplicationWindowMs: 0, quota });
    await waitForStarted(1);
    expect(wakeups.size).toBe(0);

    // The first message finishes: its entry leaves the stream, then its slot is released.
    const [entry] = await db.inspect.xrange(keys.stream, '-', '+');
    await db.inspect.xdel(keys.stream, entry![0]);
    await db.inspect.hdel(keys.streamIndex, head.id);
    await new MessageStore(connection, keys, 0, wakeups).releaseQueueSlot('q', head.id);
    expect(wakeups.size).toBe(1);
    await expectStartedOnTime(held);
  });

  it('when a paused queue whose oldest message is delayed is resumed, then the resume wakes the queue when that one is due', async () => {
    const { connection, wakeups } = replica();
    // Paused and enqueued by a store without wake-ups: only the resume can arm one here.
    const store = new QueueStore(connection, keys);
    await store.upsert('q', { paused: true, create: true }, quota);
    const held = delayed('q', 'held', Date.now() + HELD_MS);
    await store.enqueue('q', [held], { deduplicationWindowMs: 0, quota });
    expect(wakeups.size).toBe(0);

    expect(
      await new QueueStore(connection, keys, 0, wakeups).upsert('q', { paused: false, create: false }, quota),
    ).toBe(true);
    expect(wakeups.size).toBe(1);
    await expectStartedOnTime(held);
  });

  it("when a queue's dead letter is retried with a delay, then the retry wakes the queue when its message is due", async () => {
    const { connection, wakeups } = replica();
    const letter = buildDeadLetter({
      message: testMessage('again', { queueName: 'q' }),
      reason: 'retries-exhausted',
      failedAt: Date.now(),
    });
    await db.inspect.hset(keys.deadLetters, letter.dlqId, JSON.stringify(letter));
    await db.inspect.zadd(keys.deadLetterOrder, 0, letter.dlqId);
    // As the DLQ API's retry with Upstash-Delay: the queue is created by the retry, idle, its one
    // message delayed, so only the retry can arm a wake-up here.
    const retried = buildRetriedMessage(letter, { notBefore: Date.now() + HELD_MS }, Date.now());
    const dlq = new DeadLetterQueue(connection, keys, 0, wakeups);
    expect(await dlq.retry([{ dlqId: letter.dlqId, message: retried }], quota)).toEqual([true]);
    expect(await started()).toEqual([]);
    expect(wakeups.size).toBe(1);

    await waitForStarted(1);
    const [start] = await started();
    expect(start!.body).toBe('again');
    expect(start!.at).toBeGreaterThanOrEqual(retried.notBefore!);
  });

  it('when the dispatch fails (the database is gone), then the wake-up is dropped quietly and not retried in a loop', async () => {
    const dispatched: string[] = [];
    const wakeups = new QueueWakeups(async (queue) => {
      dispatched.push(queue);
      if (queue === 'q') throw new Error('Connection is closed.');
      return undefined;
    });
    wakeups.wakeIn('q', 0);
    await waitFor('the failed dispatch', async () => (dispatched.length > 0 ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 5,
    });
    // A wake-up armed after the failure was handled runs, and q's has not come again before it.
    wakeups.wakeIn('later', 0);
    await waitFor('the later wake-up', async () => (dispatched.includes('later') ? true : undefined), {
      timeoutMs: 5_000,
      intervalMs: 5,
    });
    expect(dispatched).toEqual(['q', 'later']);
    expect(wakeups.size).toBe(0);
    wakeups.stop();
  });
});
