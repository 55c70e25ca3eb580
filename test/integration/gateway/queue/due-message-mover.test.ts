import type { QueueMessage } from '../../../../gateway/queue/core/message.js';
import { FlowControlStore } from '../../../../gateway/queue/stores/flow-control-store.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { DueMessageMover } from '../../../../gateway/queue/workers/due-message-mover.js';
import { waitFor } from '../../../../local/wait.js';
import { createMemoryLogger } from '../../../helpers/memory-logger.js';
import { connectAsGateway } from '../../../helpers/queue/redis-snapshot.js';
import { testMessage, useStoreFixture } from '../../../helpers/queue/store-fixture.js';

/**
 * A delivery worker's mover pass on a real Redis (the store's script alone is message-store.test.ts's):
 * one pass moves every due message however many script runs that takes, stops between runs once
 * the worker stops, moves nothing and ticks no flow-control key on a replica that is not the mover,
 * and logs, rather than throws, what Redis refuses.
 */
describe('the due-message mover', () => {
  const f = useStoreFixture('mover');
  /** One script run's batch (due-message-mover.ts): the passes below need more than one run. */
  const BATCH = 500;

  const moverOf = (consumerName: string, running: () => boolean = () => true) => {
    const memory = createMemoryLogger('info');
    const mover = new DueMessageMover({
      redis: f.redis,
      keys: f.keys,
      consumerName,
      logger: memory.logger,
      running,
    });
    return { mover, logged: memory.entries };
  };

  /**
   * `count` messages delayed until `dueAt`, stored as publishes at `publishedAt` (before it), so
   * they wait in the schedule rather than go to the stream.
   */
  const storeDelayed = async (
    count: number,
    dueAt: number,
    publishedAt = dueAt - 10,
  ): Promise<QueueMessage[]> => {
    const messages = Array.from({ length: count }, (_, i) => testMessage(`m${i}`, {}, { notBefore: dueAt }));
    for (let i = 0; i < count; i += BATCH) await f.store.enqueue(messages.slice(i, i + BATCH), publishedAt);
    return messages;
  };

  it('when more messages are due than one script run moves, then one pass moves them all, indexed, and leaves what is not due yet', async () => {
    const now = Date.now();
    const due = await storeDelayed(2 * BATCH + 1, now - 1_000);
    const [later] = await storeDelayed(1, now + 60_000, now);
    expect(await f.redis.zcard(f.keys.schedule)).toBe(2 * BATCH + 2);
    await moverOf('a').mover.promoteDue(f.store);
    expect(await f.redis.xlen(f.keys.stream)).toBe(2 * BATCH + 1);
    expect(await f.redis.hlen(f.keys.streamIndex)).toBe(2 * BATCH + 1);
    expect(await f.redis.hexists(f.keys.streamIndex, due[BATCH * 2]!.id)).toBe(1);
    expect(await f.redis.zrange(f.keys.schedule, '0', '-1')).toEqual([later!.id]);
    expect(await f.redis.hkeys(f.keys.scheduledMessages)).toEqual([later!.id]);
  });

  it('when the worker stops during a pass, then the pass ends after the run in progress and the rest stay scheduled', async () => {
    await storeDelayed(BATCH + 10, Date.now() - 1_000);
    await moverOf('a', () => false).mover.promoteDue(f.store);
    expect(await f.redis.xlen(f.keys.stream)).toBe(BATCH);
    expect(await f.redis.zcard(f.keys.schedule)).toBe(10);
  });

  it('when another replica is the mover, then a pass here moves nothing and starts no flow-control message, and the mover does both', async () => {
    const a = moverOf('replica-a');
    const b = moverOf('replica-b');
    // A holds the lease (for longer than this test: a loaded machine must not let it lapse).
    await f.redis.set(f.keys.moverLease, 'replica-a', 'PX', 60_000);
    await storeDelayed(3, Date.now() - 1_000);
    // A flow-control message waits in its key's due set until it is due (by Redis's clock) and a
    // tick moves it on.
    const serverNow = async (): Promise<number> => Number((await f.redis.time())[0]) * 1_000;
    const dueAt = (await serverNow()) + 1_000;
    const flowMessage = testMessage(
      'fc',
      { flowControl: { key: 'k', parallelism: 1 } },
      { notBefore: dueAt },
    );
    await new FlowControlStore(f.redis, f.keys).enqueue([flowMessage], { deduplicationWindowMs: 0 });
    expect(await f.redis.zcard(f.keys.flowControlDue('k'))).toBe(1);
    await waitFor(
      'the flow-control message to be due',
      async () => (await serverNow()) > dueAt || undefined,
      {
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );

    await b.mover.promoteDue(f.store);
    expect(await f.redis.xlen(f.keys.stream)).toBe(0);
    expect(await f.redis.zcard(f.keys.flowControlDue('k'))).toBe(1);

    await a.mover.promoteDue(f.store);
    expect(await f.redis.xlen(f.keys.stream)).toBe(4);
    expect(await f.redis.zcard(f.keys.flowControlDue('k'))).toBe(0);
    expect(await f.redis.hexists(f.keys.streamIndex, flowMessage.id)).toBe(1);
    expect([...a.logged, ...b.logged]).toEqual([]);
  });

  it('when Redis refuses the pass, then the pass resolves and logs a warning, and the next pass on a working connection moves what is due', async () => {
    await storeDelayed(2, Date.now() - 1_000);
    const closed = connectAsGateway(f.server, { blocking: false });
    await closed.quit();
    const { mover, logged } = moverOf('a');
    await expect(mover.promoteDue(new MessageStore(closed, f.keys))).resolves.toBeUndefined();
    expect(logged).toEqual([
      expect.objectContaining({ level: 'warn', message: 'moving due messages failed' }),
    ]);
    expect(await f.redis.zcard(f.keys.schedule)).toBe(2);
    await mover.promoteDue(f.store);
    expect(await f.redis.xlen(f.keys.stream)).toBe(2);
  });
});
