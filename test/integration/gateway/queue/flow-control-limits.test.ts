import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { FLOW_LIMITS_LUA } from '../../../../gateway/queue/scripts/flow-control-limits.js';
import type { FlowControl, FlowControlRecord } from '../../../../gateway/queue/core/flow-control.js';
import type { QueueMessage } from '../../../../gateway/queue/core/message.js';
import { PendingMessages } from '../../../../gateway/queue/stores/pending-messages.js';
import {
  flowControlKeys as keys,
  flowControlMessage as message,
  useFlowControlFixture,
} from '../../../helpers/queue/flow-control-fixture.js';

/**
 * QStash keeps each publish's limits: while messages with older limits are unfinished beside newer
 * ones the key allows the highest, and the newer limits alone once the older messages are done.
 * The key's record counts its unfinished messages by limits; every way a message finishes for
 * good takes it out, a retry keeps it, and the mover's tick heals counts that drifted.
 */
describe('flow-control limits: the highest among the unfinished messages', () => {
  const fc = useFlowControlFixture({ blocking: true });
  const { enqueue, startedBodies } = fc;
  beforeEach(() => fc.messages.ensureGroup());

  const record = async (key: string) =>
    JSON.parse((await fc.client.hget(keys.flowControls, key))!) as FlowControlRecord;
  /** Delivered: its entry is completed, then its attempt releases the token. */
  const deliver = async (sent: QueueMessage) => {
    const entryId = (await fc.client.hget(keys.streamIndex, sent.id))!;
    await fc.messages.complete(entryId, sent.id);
    await fc.messages.releaseFlowControlToken(sent.flowControl!, sent.id);
  };
  const batch = (limits: FlowControl, prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => message(limits, `${prefix}${i + 1}`));

  it('when messages of parallelism 1 are joined by ones of 3, then 3 run at once until the parallelism-3 ones finish, then 1 again', async () => {
    const one = batch({ key: 'p', parallelism: 1 }, 'a', 4);
    const three = batch({ key: 'p', parallelism: 3 }, 'b', 2);
    await enqueue(...one);
    expect(await startedBodies()).toEqual(['a1']);
    expect(await fc.flows.get('p')).toMatchObject({ parallelismMax: 1, waitListSize: 3 });
    await enqueue(...three);
    expect(await startedBodies()).toEqual(['a1', 'a2', 'a3']);
    expect(await fc.flows.get('p')).toMatchObject({ parallelismMax: 3, parallelismCount: 3 });
    expect((await record('p')).parallelismCounts).toEqual({ '1': 4, '3': 2 });
    for (const done of one.slice(0, 3)) await deliver(done);
    // a4, b1 and b2 run together while the parallelism-3 messages are unfinished.
    expect(await fc.client.scard(keys.flowControlActive('p'))).toBe(3);
    for (const done of three) await deliver(done);
    expect(await fc.flows.get('p')).toMatchObject({ parallelismMax: 1, parallelismCount: 1 });
    const later = batch({ key: 'p', parallelism: 1 }, 'c', 2);
    await enqueue(...later);
    expect(await fc.client.scard(keys.flowControlActive('p'))).toBe(1);
    await deliver(one[3]!);
    expect(await startedBodies()).toEqual(['c1']);
    expect((await record('p')).parallelismCounts).toEqual({ '1': 2 });
  });

  it('when rates differ, then the key allows the most calls per second (a tie to the larger rate) until those messages finish', async () => {
    const slow = batch({ key: 'r', rate: 1, periodSeconds: 60 }, 's', 3);
    await enqueue(...slow);
    expect(await startedBodies()).toEqual(['s1']);
    // 10 per 10 s is 1 per second, more than 1 per minute: s2, s3 and f1 start in the same window.
    const fast = message({ key: 'r', rate: 10, periodSeconds: 10 }, 'f1');
    await enqueue(fast);
    expect(await fc.flows.get('r')).toMatchObject({ rateMax: 10, ratePeriod: 10, rateCount: 4 });
    expect(await startedBodies()).toEqual(['s1', 's2', 's3', 'f1']);
    // The same calls per second with a smaller rate does not win; no rate at all does.
    await enqueue(message({ key: 'r', rate: 1, periodSeconds: 1 }, 'g1'));
    expect(await fc.flows.get('r')).toMatchObject({ rateMax: 10, ratePeriod: 10 });
    const unlimited = message({ key: 'r', parallelism: 5 }, 'u1');
    await enqueue(unlimited);
    expect(await fc.flows.get('r')).toMatchObject({ rateMax: 0, parallelismMax: 0 });
    expect((await record('r')).rateCounts).toEqual({ '1/60': 3, '10/10': 1, '1/1': 1, '0': 1 });
    for (const done of [fast, unlimited]) await deliver(done);
    expect(await fc.flows.get('r')).toMatchObject({ rateMax: 1, ratePeriod: 1, parallelismMax: 0 });
  });

  it('when rates tie on calls per second, then the larger rate wins whatever the order the counts are read in', async () => {
    const highest = async (rateCounts: Record<string, number>) =>
      JSON.parse(
        (await fc.client.eval(
          `${FLOW_LIMITS_LUA} local flow = cjson.decode(ARGV[1]) use_highest_limits(flow) return cjson.encode(flow)`,
          0,
          JSON.stringify({ parallelism: 0, rate: 0, period: 1, rateCounts }),
        )) as string,
      ) as { rate: number; period: number };
    const ties: [Record<string, number>, { rate: number; period: number }][] = [
      [
        { '1/1': 1, '10/10': 1 },
        { rate: 10, period: 10 },
      ],
      [
        { '10/10': 1, '1/1': 1 },
        { rate: 10, period: 10 },
      ],
      [
        { '2/1': 1, '120/60': 1, '1/60': 5 },
        { rate: 120, period: 60 },
      ],
      [
        { '3600/3600': 2, '60/60': 1, '1/1': 3 },
        { rate: 3600, period: 3600 },
      ],
      [
        { '5/10': 1, '1/2': 1, '50/100': 1, '3/6': 1 },
        { rate: 50, period: 100 },
      ],
      [
        { '7/1': 1, '0': 1, '100/1': 1 },
        { rate: 0, period: 1 },
      ],
    ];
    for (const [counts, expected] of ties) expect(await highest(counts)).toMatchObject(expected);
  });

  it("when a key is pinned, then the messages' limits do not change it, and unpinning gives the highest of the unfinished ones", async () => {
    await fc.flows.update('pin', { change: 'pin', parallelism: 2, rate: 4, periodSeconds: 1 });
    await enqueue(...batch({ key: 'pin', parallelism: 5, rate: 100 }, 'm', 6));
    await enqueue(message({ key: 'pin', parallelism: 1 }, 'n1'));
    expect(await fc.flows.get('pin')).toMatchObject({ parallelismMax: 2, rateMax: 4, ratePeriod: 1 });
    expect(await startedBodies()).toEqual(['m1', 'm2']);
    await fc.flows.update('pin', { change: 'unpin', parallelism: true, rate: false });
    expect(await fc.flows.get('pin')).toMatchObject({ parallelismMax: 5, rateMax: 4, isPinnedRate: true });
    expect(await startedBodies()).toEqual(['m1', 'm2', 'm3', 'm4']);
    await fc.flows.update('pin', { change: 'unpin', parallelism: false, rate: true });
    expect(await fc.flows.get('pin')).toMatchObject({ rateMax: 0 });
  });

  it('when a waiting message is cancelled, an attempt is parked for a retry or a message is dead-lettered, then only the finished ones leave the counts', async () => {
    const first = message({ key: 'c', parallelism: 1 }, 'first', { retries: 3 });
    const doomed = message({ key: 'c', parallelism: 2 }, 'doomed');
    const cancelled = message({ key: 'c', parallelism: 4 }, 'cancelled');
    await fc.flows.update('c', { change: 'pause' });
    await enqueue(first, doomed, cancelled);
    expect(await fc.flows.get('c')).toMatchObject({ parallelismMax: 4, waitListSize: 3 });
    expect(await new PendingMessages(fc.client, keys).cancel([cancelled.id])).toBe(1);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1, '2': 1 });
    expect(await fc.client.lrange(keys.flowControlWaiting('c'), 0, -1)).toEqual([first.id, doomed.id]);
    await fc.flows.update('c', { change: 'resume' });
    expect(await startedBodies()).toEqual(['first', 'doomed']);
    const entries = await fc.messages.readNew(fc.blocking, 'consumer', 10, 100);
    const entryOf = (sent: QueueMessage) =>
      entries.find((entry) => entry.stored?.toString().includes(sent.id))!.entryId;

    // A retry stays in the key: parked in the due set, its release takes nothing out.
    expect(
      await fc.messages.scheduleRetry({
        entryId: entryOf(first),
        consumer: 'consumer',
        message: { ...first, retried: 1 },
        dueAt: Date.now() + 60_000,
      }),
    ).toBe(true);
    await fc.messages.releaseFlowControlToken(first.flowControl!, first.id);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1, '2': 1 });
    expect(await fc.flows.get('c')).toMatchObject({ parallelismMax: 2 });

    const letter = buildDeadLetter({ message: doomed, reason: 'retries-exhausted', failedAt: Date.now() });
    expect(
      await fc.messages.deadLetter({
        entryId: entryOf(doomed),
        consumer: 'consumer',
        letter,
        limits: { retentionMs: 86_400_000, maxCount: 100 },
      }),
    ).toBe(true);
    await fc.messages.releaseFlowControlToken(doomed.flowControl!, doomed.id);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1 });
    expect(await fc.flows.get('c')).toMatchObject({ parallelismMax: 1 });

    // The parked retry, cancelled, empties the counts; the idle key is then forgotten.
    expect(await new PendingMessages(fc.client, keys).cancel([first.id])).toBe(1);
    expect((await record('c')).parallelismCounts).toEqual({});
    expect(await fc.client.exists(keys.flowControlDue('c'))).toBe(0);
    expect(await fc.flows.tick('c')).toMatchObject({ forgotten: true });
  });

  it('when the counts drifted from the messages, then the tick rebuilds them and the key follows', async () => {
    const low = batch({ key: 'drift', parallelism: 1, rate: 2, periodSeconds: 1 }, 'l', 3);
    await enqueue(...low);
    const delayed = message({ key: 'drift', parallelism: 1, rate: 2, periodSeconds: 1 }, 'later', {
      notBefore: Date.now() + 60_000,
    });
    await enqueue(delayed);
    // As a path that forgot to take finished messages out would leave it; and a cancelled id left behind.
    const drifted = await record('drift');
    drifted.parallelismCounts = { '1': 4, '8': 2 };
    drifted.rateCounts = { '2/1': 4, '50/1': 2 };
    drifted.parallelism = 8;
    drifted.rate = 50;
    drifted.paused = true; // so no tick starts anything by the drifted limits meanwhile
    await fc.client.hset(keys.flowControls, 'drift', JSON.stringify(drifted));
    await fc.client.rpush(keys.flowControlWaiting('drift'), 'a-cancelled-id');
    // The first tick marks the mismatch (it may be a retry between its parking and its release);
    // the second, finding it again, rebuilds the counts.
    await fc.flows.tick('drift');
    expect(await record('drift')).toMatchObject({ countsDrifted: true, parallelism: 8 });
    await fc.flows.tick('drift');
    const healed = await record('drift');
    expect(healed.parallelismCounts).toEqual({ '1': 4 });
    expect(healed.rateCounts).toEqual({ '2/1': 4 });
    expect(await fc.flows.get('drift')).toMatchObject({ parallelismMax: 1, rateMax: 2, waitListSize: 2 });
    expect(await fc.client.lrange(keys.flowControlWaiting('drift'), 0, -1)).not.toContain('a-cancelled-id');
    // A key stored before the counts existed gets them at its first tick.
    const old = await record('drift');
    delete old.parallelismCounts;
    delete old.rateCounts;
    await fc.client.hset(keys.flowControls, 'drift', JSON.stringify(old));
    await fc.flows.tick('drift');
    await fc.flows.tick('drift');
    expect((await record('drift')).parallelismCounts).toEqual({ '1': 4 });
    expect((await record('drift')).countsDrifted).toBeUndefined();
  });

  it('when a mismatch lasts a moment only (a retry parked, its release not yet in), then the counts are not rebuilt', async () => {
    const [running, next] = batch({ key: 'moment', parallelism: 1 }, 'm', 2);
    await enqueue(running!, next!);
    // Counts that add up but that a recount would change: they must survive.
    const kept = await record('moment');
    kept.parallelismCounts = { '1': 1, '7': 1 };
    await fc.client.hset(keys.flowControls, 'moment', JSON.stringify(kept));
    // The retry is parked in the due set while its token is still held.
    await fc.client.zadd(keys.flowControlDue('moment'), Date.now() + 60_000, running!.id);
    await fc.flows.tick('moment');
    expect(await record('moment')).toMatchObject({
      countsDrifted: true,
      parallelismCounts: { '1': 1, '7': 1 },
    });
    await fc.client.srem(keys.flowControlActive('moment'), running!.id);
    await fc.flows.tick('moment');
    const after = await record('moment');
    expect(after.parallelismCounts).toEqual({ '1': 1, '7': 1 });
    expect(after.countsDrifted).toBeUndefined();
  });
});
