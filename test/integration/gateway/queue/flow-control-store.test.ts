import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { waitFor } from '../../../../local/wait.js';
import { ConsumerLiveness } from '../../../../gateway/queue/delivery/consumer-liveness.js';
import { buildDeadLetter } from '../../../../gateway/queue/dlq/dead-letter.js';
import { FLOW_LIMITS_LUA } from '../../../../gateway/queue/scripts/flow-control-limits.js';
import type { FlowControl, FlowControlRecord } from '../../../../gateway/queue/flow-control/flow-control.js';
import { FlowControlStore } from '../../../../gateway/queue/flow-control/flow-control-store.js';
import { queueKeys, type QueueKeys } from '../../../../gateway/queue/keys.js';
import type { QueueMessage } from '../../../../gateway/queue/message.js';
import { MessageStore } from '../../../../gateway/queue/message-store.js';
import { PendingMessages } from '../../../../gateway/queue/messages/pending-messages.js';
import { createMemoryLogger } from '../../../helpers/memory-logger.js';
import { connectAsGateway, connectTestRedis } from '../../../helpers/queue/redis-snapshot.js';
import { testMessage } from '../../../helpers/queue/store-fixture.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';

const keys = queueKeys('{fc}:');

function message(flowControl: FlowControl, body: string, extra: Partial<QueueMessage> = {}): QueueMessage {
  return testMessage(body, { flowControl }, extra);
}

/**
 * The flow-control store and its Lua scripts on a real Redis: a key's parallelism and rate are
 * counted in Redis (so every gateway replica shares them), its messages wait rather than fail,
 * a token goes back on every outcome of an attempt, and a token whose release never came is
 * freed by the mover's tick.
 */
describe('the flow-control store: tokens and rate windows in Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  let flows: FlowControlStore;
  let messages: MessageStore;

  beforeAll(async () => {
    redis = await startRedis();
    client = connectTestRedis(redis);
    flows = new FlowControlStore(client, keys);
    messages = new MessageStore(client, keys);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });
  beforeEach(() => client.flushdb());

  const enqueue = (...batch: QueueMessage[]) => flows.enqueue(batch, { deduplicationWindowMs: 0 });
  /** Bodies of the messages on the delivery stream, oldest first. */
  const started = async (): Promise<string[]> =>
    (await client.xrange(keys.stream, '-', '+')).map(([, fields]) => fields[1]!.split('\n')[1]!);
  const serverNow = async (): Promise<number> => {
    const [seconds, micros] = await client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it('when many publishes race on one key of parallelism 2, then every message is kept and exactly the 2 oldest are started', async () => {
    const limits = { key: 'k', parallelism: 2 };
    for (let i = 0; i < 20; i += 1) await enqueue(message(limits, `m${String(i).padStart(2, '0')}`));
    await Promise.all(Array.from({ length: 20 }, (_, i) => enqueue(message(limits, `late${i}`))));
    expect(await started()).toEqual(['m00', 'm01']);
    expect(await flows.get('k')).toMatchObject({
      flowControlKey: 'k',
      parallelismMax: 2,
      parallelismCount: 2,
      waitListSize: 38,
      rateMax: 0,
    });
    // Every waiting message is readable through the messages API.
    const waitingId = (await client.lrange(keys.flowControlWaiting('k'), 0, 0))[0]!;
    expect(await new PendingMessages(client, keys).find(waitingId)).toMatchObject({ state: 'scheduled' });
  });

  it('when a key has a rate of 3 per second, then 3 start in each window and the rest wait for the next', async () => {
    const limits = { key: 'r', rate: 3, periodSeconds: 1 };
    await enqueue(...Array.from({ length: 7 }, (_, i) => message(limits, `r${i}`)));
    expect(await started()).toEqual(['r0', 'r1', 'r2']);
    const first = await flows.get('r');
    expect(first).toMatchObject({ rateMax: 3, rateCount: 3, ratePeriod: 1, waitListSize: 4 });
    // Within the window the mover's tick starts nothing.
    expect((await flows.tick('r')).started).toBe(0);
    const windowStart = Number(JSON.parse((await client.hget(keys.flowControls, 'r'))!).ratePeriodStart);
    await waitFor('the next window', async () => (await serverNow()) >= windowStart + 1_000 || undefined, {
      timeoutMs: 3_000,
      intervalMs: 20,
    });
    expect((await flows.tick('r')).started).toBe(3);
    expect((await flows.tick('r')).started).toBe(0);
    expect(await started()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(await flows.get('r')).toMatchObject({ rateCount: 3, waitListSize: 1 });
  });

  it("when a message is delayed, then it waits in its key's due set and passes the limits once due", async () => {
    const limits = { key: 'd', parallelism: 5 };
    const now = await serverNow();
    await enqueue(message(limits, 'later', { notBefore: now + 300 }), message(limits, 'now'));
    expect(await started()).toEqual(['now']);
    expect(await client.zcard(keys.flowControlDue('d'))).toBe(1);
    await waitFor(
      'the delayed message started',
      async () => (await flows.tick('d')).started === 1 || undefined,
      {
        timeoutMs: 3_000,
        intervalMs: 50,
      },
    );
    expect(await started()).toEqual(['now', 'later']);
  });

  it('when a key is paused, pinned, unpinned and reset, then each change takes effect at once and a missing key is reported', async () => {
    await flows.update('p', { change: 'pause' });
    await enqueue(message({ key: 'p', parallelism: 1 }, 'a'), message({ key: 'p', parallelism: 1 }, 'b'));
    expect(await started()).toEqual([]);
    expect(await flows.get('p')).toMatchObject({ isPaused: true, waitListSize: 2, parallelismMax: 1 });
    await flows.update('p', { change: 'pin', parallelism: 2 });
    // A pinned parallelism is not changed by the messages that come after.
    await enqueue(message({ key: 'p', parallelism: 1 }, 'c'));
    expect(await flows.get('p')).toMatchObject({ isPinnedParallelism: true, parallelismMax: 2 });
    await flows.update('p', { change: 'resume' });
    expect(await started()).toEqual(['a', 'b']);
    await flows.update('p', { change: 'unpin', parallelism: true, rate: false });
    await enqueue(message({ key: 'p', parallelism: 4 }, 'd'));
    expect(await flows.get('p')).toMatchObject({ isPinnedParallelism: false, parallelismMax: 4 });
    expect(await started()).toEqual(['a', 'b', 'c', 'd']);

    await enqueue(...['x', 'y'].map((body) => message({ key: 'q', rate: 1, periodSeconds: 60 }, body)));
    expect((await flows.get('q'))?.rateCount).toBe(1);
    await flows.update('q', { change: 'resetRate' });
    expect(await started()).toEqual(['a', 'b', 'c', 'd', 'x', 'y']);
    expect(await flows.update('missing', { change: 'resume' })).toBe(false);
    expect(await flows.update('missing', { change: 'resetRate' })).toBe(false);
    expect(await client.hexists(keys.flowControls, 'missing')).toBe(0);
  });

  it('when a started message finished but its release never reached Redis, then the tick frees its token and starts the next', async () => {
    const limits = { key: 't', parallelism: 1 };
    await enqueue(message(limits, 'first'), message(limits, 'second'));
    const entryId = (await client.xrange(keys.stream, '-', '+'))[0]![0];
    const [firstId] = await client.smembers(keys.flowControlActive('t'));
    await messages.ensureGroup();
    // The delivery is recorded (entry and index gone), then the gateway dies before releasing.
    await messages.complete(entryId, firstId!);
    expect(await flows.tick('t')).toEqual({ freed: 1, started: 1, forgotten: false });
    expect(await started()).toEqual(['second']);
    expect(await flows.tick('t')).toEqual({ freed: 0, started: 0, forgotten: false });
  });

  it("when the mover's pass runs over more keys than one script run takes, then every key is ticked once and the idle ones forgotten", async () => {
    const now = await serverNow();
    // 250 keys (three script runs): each with a message due in 200 ms; every fifth also idle-able.
    const names = Array.from({ length: 250 }, (_, i) => `many${String(i).padStart(3, '0')}`);
    for (const name of names)
      await enqueue(message({ key: name, parallelism: 1 }, name, { notBefore: now + 200 }));
    await enqueue(message({ key: 'idle', rate: 1, periodSeconds: 1 }, 'idle'));
    await messages.ensureGroup();
    const idleEntry = (await client.xrange(keys.stream, '-', '+'))[0]!;
    await messages.complete(idleEntry[0], (await client.smembers(keys.flowControlActive('idle')))[0]!);
    await waitFor('the delayed messages due', async () => (await serverNow()) >= now + 1_200 || undefined, {
      timeoutMs: 3_000,
      intervalMs: 50,
    });
    const ticks = await flows.tickAll();
    expect(ticks.map((t) => t.key).sort()).toEqual(['idle', ...names].sort());
    expect(
      ticks
        .filter((t) => t.started === 1)
        .map((t) => t.key)
        .sort(),
    ).toEqual(names);
    expect(ticks.find((t) => t.key === 'idle')).toEqual({
      key: 'idle',
      freed: 1,
      started: 0,
      forgotten: true,
    });
    expect((await started()).sort()).toEqual(names);
    // A pass that is told to stop ticks no further run.
    expect(await flows.tickAll(() => false)).toEqual([]);
  });

  it("when the replica delivering a key's message dies, then its token stays held until a survivor claims, finishes and releases it", async () => {
    const limits = { key: 'dead', parallelism: 1 };
    await enqueue(message(limits, 'held'), message(limits, 'next'));
    await messages.ensureGroup();
    const liveness = new ConsumerLiveness(client, keys);
    const blocking = connectAsGateway(redis, { blocking: true });
    try {
      await liveness.heartbeat('replica-dead');
      const [entry] = await messages.readNew(blocking, 'replica-dead', 10, 100);
      // The dead replica's entry is still on the stream: the tick must not hand its token out.
      expect(await flows.tick('dead')).toMatchObject({ freed: 0, started: 0 });
      await new Promise((resolve) => setTimeout(resolve, 120));
      const claimed = await liveness.claimFromDead('replica-alive', 100, 10);
      expect(claimed?.deadConsumer).toBe('replica-dead');
      expect(claimed?.entries.map((e) => e.entryId)).toEqual([entry!.entryId]);
      const id = (await client.smembers(keys.flowControlActive('dead')))[0]!;
      await messages.complete(entry!.entryId, id);
      await messages.releaseFlowControlToken(limits, id);
      expect(await started()).toEqual(['next']);
      expect(await client.smembers(keys.flowControlActive('dead'))).not.toContain(id);
    } finally {
      blocking.disconnect();
    }
  });

  it('when a release comes for a message still on the stream, or comes twice, then no token in use is freed', async () => {
    const limits = { key: 'twice', parallelism: 1 };
    await enqueue(message(limits, 'first'), message(limits, 'second'), message(limits, 'third'));
    const [firstId] = await client.smembers(keys.flowControlActive('twice'));
    await messages.releaseFlowControlToken(limits, firstId!);
    expect(await started()).toEqual(['first']);
    const entryId = (await client.xrange(keys.stream, '-', '+'))[0]![0];
    await messages.ensureGroup();
    await messages.complete(entryId, firstId!);
    await messages.releaseFlowControlToken(limits, firstId!);
    await messages.releaseFlowControlToken(limits, firstId!);
    expect(await started()).toEqual(['second']);
    expect(await client.scard(keys.flowControlActive('twice'))).toBe(1);
  });
});

/**
 * QStash keeps each publish's limits: while messages with older limits are unfinished beside newer
 * ones the key allows the highest, and the newer limits alone once the older messages are done.
 * The key's record counts its unfinished messages by limits; every way a message finishes for
 * good takes it out, a retry keeps it, and the mover's tick heals counts that drifted.
 */
describe('flow-control limits: the highest among the unfinished messages', () => {
  let redis: RedisServer;
  let client: Redis;
  let blocking: Redis;
  let flows: FlowControlStore;
  let messages: MessageStore;

  beforeAll(async () => {
    redis = await startRedis();
    client = connectTestRedis(redis);
    blocking = connectAsGateway(redis, { blocking: true });
    flows = new FlowControlStore(client, keys);
    messages = new MessageStore(client, keys);
  });
  afterAll(async () => {
    blocking?.disconnect();
    client?.disconnect();
    await redis?.stop();
  });
  beforeEach(async () => {
    await client.flushdb();
    await messages.ensureGroup();
  });

  const enqueue = (...batch: QueueMessage[]) => flows.enqueue(batch, { deduplicationWindowMs: 0 });
  const startedBodies = async (): Promise<string[]> =>
    (await client.xrange(keys.stream, '-', '+')).map(([, fields]) => fields[1]!.split('\n')[1]!);
  const record = async (key: string) =>
    JSON.parse((await client.hget(keys.flowControls, key))!) as FlowControlRecord;
  /** Delivered: its entry is completed, then its attempt releases the token. */
  const deliver = async (sent: QueueMessage) => {
    const entryId = (await client.hget(keys.streamIndex, sent.id))!;
    await messages.complete(entryId, sent.id);
    await messages.releaseFlowControlToken(sent.flowControl!, sent.id);
  };
  const batch = (limits: FlowControl, prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => message(limits, `${prefix}${i + 1}`));

  it('when messages of parallelism 1 are joined by ones of 3, then 3 run at once until the parallelism-3 ones finish, then 1 again', async () => {
    const one = batch({ key: 'p', parallelism: 1 }, 'a', 4);
    const three = batch({ key: 'p', parallelism: 3 }, 'b', 2);
    await enqueue(...one);
    expect(await startedBodies()).toEqual(['a1']);
    expect(await flows.get('p')).toMatchObject({ parallelismMax: 1, waitListSize: 3 });
    await enqueue(...three);
    expect(await startedBodies()).toEqual(['a1', 'a2', 'a3']);
    expect(await flows.get('p')).toMatchObject({ parallelismMax: 3, parallelismCount: 3 });
    expect((await record('p')).parallelismCounts).toEqual({ '1': 4, '3': 2 });
    for (const done of one.slice(0, 3)) await deliver(done);
    // a4, b1 and b2 run together while the parallelism-3 messages are unfinished.
    expect(await client.scard(keys.flowControlActive('p'))).toBe(3);
    for (const done of three) await deliver(done);
    expect(await flows.get('p')).toMatchObject({ parallelismMax: 1, parallelismCount: 1 });
    const later = batch({ key: 'p', parallelism: 1 }, 'c', 2);
    await enqueue(...later);
    expect(await client.scard(keys.flowControlActive('p'))).toBe(1);
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
    expect(await flows.get('r')).toMatchObject({ rateMax: 10, ratePeriod: 10, rateCount: 4 });
    expect(await startedBodies()).toEqual(['s1', 's2', 's3', 'f1']);
    // The same calls per second with a smaller rate does not win; no rate at all does.
    await enqueue(message({ key: 'r', rate: 1, periodSeconds: 1 }, 'g1'));
    expect(await flows.get('r')).toMatchObject({ rateMax: 10, ratePeriod: 10 });
    const unlimited = message({ key: 'r', parallelism: 5 }, 'u1');
    await enqueue(unlimited);
    expect(await flows.get('r')).toMatchObject({ rateMax: 0, parallelismMax: 0 });
    expect((await record('r')).rateCounts).toEqual({ '1/60': 3, '10/10': 1, '1/1': 1, '0': 1 });
    for (const done of [fast, unlimited]) await deliver(done);
    expect(await flows.get('r')).toMatchObject({ rateMax: 1, ratePeriod: 1, parallelismMax: 0 });
  });

  it('when rates tie on calls per second, then the larger rate wins whatever the order the counts are read in', async () => {
    const highest = async (rateCounts: Record<string, number>) =>
      JSON.parse(
        (await client.eval(
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
    await flows.update('pin', { change: 'pin', parallelism: 2, rate: 4, periodSeconds: 1 });
    await enqueue(...batch({ key: 'pin', parallelism: 5, rate: 100 }, 'm', 6));
    await enqueue(message({ key: 'pin', parallelism: 1 }, 'n1'));
    expect(await flows.get('pin')).toMatchObject({ parallelismMax: 2, rateMax: 4, ratePeriod: 1 });
    expect(await startedBodies()).toEqual(['m1', 'm2']);
    await flows.update('pin', { change: 'unpin', parallelism: true, rate: false });
    expect(await flows.get('pin')).toMatchObject({ parallelismMax: 5, rateMax: 4, isPinnedRate: true });
    expect(await startedBodies()).toEqual(['m1', 'm2', 'm3', 'm4']);
    await flows.update('pin', { change: 'unpin', parallelism: false, rate: true });
    expect(await flows.get('pin')).toMatchObject({ rateMax: 0 });
  });

  it('when a waiting message is cancelled, an attempt is parked for a retry or a message is dead-lettered, then only the finished ones leave the counts', async () => {
    const first = message({ key: 'c', parallelism: 1 }, 'first', { retries: 3 });
    const doomed = message({ key: 'c', parallelism: 2 }, 'doomed');
    const cancelled = message({ key: 'c', parallelism: 4 }, 'cancelled');
    await flows.update('c', { change: 'pause' });
    await enqueue(first, doomed, cancelled);
    expect(await flows.get('c')).toMatchObject({ parallelismMax: 4, waitListSize: 3 });
    expect(await new PendingMessages(client, keys).cancel([cancelled.id])).toBe(1);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1, '2': 1 });
    expect(await client.lrange(keys.flowControlWaiting('c'), 0, -1)).toEqual([first.id, doomed.id]);
    await flows.update('c', { change: 'resume' });
    expect(await startedBodies()).toEqual(['first', 'doomed']);
    const entries = await messages.readNew(blocking, 'consumer', 10, 100);
    const entryOf = (sent: QueueMessage) =>
      entries.find((entry) => entry.stored?.toString().includes(sent.id))!.entryId;

    // A retry stays in the key: parked in the due set, its release takes nothing out.
    expect(
      await messages.scheduleRetry({
        entryId: entryOf(first),
        consumer: 'consumer',
        message: { ...first, retried: 1 },
        dueAt: Date.now() + 60_000,
      }),
    ).toBe(true);
    await messages.releaseFlowControlToken(first.flowControl!, first.id);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1, '2': 1 });
    expect(await flows.get('c')).toMatchObject({ parallelismMax: 2 });

    const letter = buildDeadLetter({ message: doomed, reason: 'retries-exhausted', failedAt: Date.now() });
    expect(
      await messages.deadLetter({
        entryId: entryOf(doomed),
        consumer: 'consumer',
        letter,
        limits: { retentionMs: 86_400_000, maxCount: 100 },
      }),
    ).toBe(true);
    await messages.releaseFlowControlToken(doomed.flowControl!, doomed.id);
    expect((await record('c')).parallelismCounts).toEqual({ '1': 1 });
    expect(await flows.get('c')).toMatchObject({ parallelismMax: 1 });

    // The parked retry, cancelled, empties the counts; the idle key is then forgotten.
    expect(await new PendingMessages(client, keys).cancel([first.id])).toBe(1);
    expect((await record('c')).parallelismCounts).toEqual({});
    expect(await client.exists(keys.flowControlDue('c'))).toBe(0);
    expect(await flows.tick('c')).toMatchObject({ forgotten: true });
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
    await client.hset(keys.flowControls, 'drift', JSON.stringify(drifted));
    await client.rpush(keys.flowControlWaiting('drift'), 'a-cancelled-id');
    // The first tick marks the mismatch (it may be a retry between its parking and its release);
    // the second, finding it again, rebuilds the counts.
    await flows.tick('drift');
    expect(await record('drift')).toMatchObject({ countsDrifted: true, parallelism: 8 });
    await flows.tick('drift');
    const healed = await record('drift');
    expect(healed.parallelismCounts).toEqual({ '1': 4 });
    expect(healed.rateCounts).toEqual({ '2/1': 4 });
    expect(await flows.get('drift')).toMatchObject({ parallelismMax: 1, rateMax: 2, waitListSize: 2 });
    expect(await client.lrange(keys.flowControlWaiting('drift'), 0, -1)).not.toContain('a-cancelled-id');
    // A key stored before the counts existed gets them at its first tick.
    const old = await record('drift');
    delete old.parallelismCounts;
    delete old.rateCounts;
    await client.hset(keys.flowControls, 'drift', JSON.stringify(old));
    await flows.tick('drift');
    await flows.tick('drift');
    expect((await record('drift')).parallelismCounts).toEqual({ '1': 4 });
    expect((await record('drift')).countsDrifted).toBeUndefined();
  });

  it('when a mismatch lasts a moment only (a retry parked, its release not yet in), then the counts are not rebuilt', async () => {
    const [running, next] = batch({ key: 'moment', parallelism: 1 }, 'm', 2);
    await enqueue(running!, next!);
    // Counts that add up but that a recount would change: they must survive.
    const kept = await record('moment');
    kept.parallelismCounts = { '1': 1, '7': 1 };
    await client.hset(keys.flowControls, 'moment', JSON.stringify(kept));
    // The retry is parked in the due set while its token is still held.
    await client.zadd(keys.flowControlDue('moment'), Date.now() + 60_000, running!.id);
    await flows.tick('moment');
    expect(await record('moment')).toMatchObject({
      countsDrifted: true,
      parallelismCounts: { '1': 1, '7': 1 },
    });
    await client.srem(keys.flowControlActive('moment'), running!.id);
    await flows.tick('moment');
    const after = await record('moment');
    expect(after.parallelismCounts).toEqual({ '1': 1, '7': 1 });
    expect(after.countsDrifted).toBeUndefined();
  });
});

describe('flow-control tokens through a delivery worker', () => {
  const f = useDeliveryFixture('fc-worker');

  it('when attempts are delivered, retried, dead-lettered or cancelled, then each gives its token back and at most parallelism run at once', async () => {
    const { config, store: messages } = f.freshConfig({ workerConcurrency: 8 });
    const k: QueueKeys = queueKeys(config.keyPrefix);
    let inFlight = 0;
    let mostInFlight = 0;
    let flakyFailed = false;
    f.destination.answer = (request) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => (inFlight -= 1), 40);
      const body = request.body.toString();
      if (body === 'doomed') return { status: 500, delayMs: 40 };
      if (body === 'flaky' && !flakyFailed) {
        flakyFailed = true;
        return { status: 503, delayMs: 40 };
      }
      return { status: 200, delayMs: 40 };
    };
    const store = new FlowControlStore(f.redis, k);
    const limits = { key: 'outcomes', parallelism: 2 };
    const send = (body: string, retries: number) =>
      message(limits, body, { destination: `${f.destination.baseUrl}/${body}`, retries });
    const bodies = ['ok-1', 'flaky', 'doomed', 'cancel-me', 'ok-2', 'ok-3', 'ok-4', 'ok-5'];
    const batch = bodies.map((body) => send(body, body === 'flaky' ? 2 : 0));
    // Paused while it is filled, so the cancelled message is surely still waiting.
    await store.update('outcomes', { change: 'pause' });
    await store.enqueue(batch, { deduplicationWindowMs: 0 });
    expect(await new PendingMessages(f.redis, k).cancel([batch[3]!.id])).toBe(1);
    await store.update('outcomes', { change: 'resume' });

    f.startWorker({ config, logger: createMemoryLogger('warn').logger });
    await waitFor(
      'every message delivered or dead-lettered',
      async () => {
        const letters = await messages.deadLetters(10);
        return (f.destination.requests.length === 8 && letters.length === 1) || undefined;
      },
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    // Five delivered at once, the flaky one on its retry, the doomed one dead-lettered, the cancelled never sent.
    expect(f.destination.requests.map((r) => r.body.toString()).sort()).toEqual([
      'doomed',
      'flaky',
      'flaky',
      'ok-1',
      'ok-2',
      'ok-3',
      'ok-4',
      'ok-5',
    ]);
    expect(mostInFlight).toBe(2);
    // Every token is back, nothing waits, and the idle key is forgotten by the mover's tick.
    await waitFor(
      'the key forgotten',
      async () => (await f.redis.hexists(k.flowControls, 'outcomes')) === 0 || undefined,
      { timeoutMs: 5_000, intervalMs: 25 },
    );
    expect(
      await f.redis.exists(
        k.flowControlActive('outcomes'),
        k.flowControlWaiting('outcomes'),
        k.flowControlDue('outcomes'),
      ),
    ).toBe(0);
  });
});
