import { waitFor } from '../../../../local/wait.js';
import { ConsumerLiveness } from '../../../../gateway/queue/stores/consumer-liveness.js';
import { FlowControlStore } from '../../../../gateway/queue/stores/flow-control-store.js';
import { queueKeys, type QueueKeys } from '../../../../gateway/queue/core/keys.js';
import { PendingMessages } from '../../../../gateway/queue/stores/pending-messages.js';
import { createMemoryLogger } from '../../../helpers/memory-logger.js';
import { connectAsGateway } from '../../../helpers/queue/redis-snapshot.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';
import { InFlightGauge } from '../../../helpers/queue/in-flight-gauge.js';
import {
  flowControlKeys as keys,
  flowControlMessage as message,
  useFlowControlFixture,
} from '../../../helpers/queue/flow-control-fixture.js';

/**
 * The flow-control store and its Lua scripts on a real Redis: a key's parallelism and rate are
 * counted in Redis (so every gateway replica shares them), its messages wait rather than fail,
 * a token goes back on every outcome of an attempt, and a token whose release never came is
 * freed by the mover's tick.
 */
describe('the flow-control store: tokens and rate windows in Redis', () => {
  const fc = useFlowControlFixture();
  const { enqueue, startedBodies: started } = fc;
  const serverNow = async (): Promise<number> => {
    const [seconds, micros] = await fc.client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it('when many publishes race on one key of parallelism 2, then every message is kept and exactly the 2 oldest are started', async () => {
    const limits = { key: 'k', parallelism: 2 };
    for (let i = 0; i < 20; i += 1) await enqueue(message(limits, `m${String(i).padStart(2, '0')}`));
    await Promise.all(Array.from({ length: 20 }, (_, i) => enqueue(message(limits, `late${i}`))));
    expect(await started()).toEqual(['m00', 'm01']);
    expect(await fc.flows.get('k')).toMatchObject({
      flowControlKey: 'k',
      parallelismMax: 2,
      parallelismCount: 2,
      waitListSize: 38,
      rateMax: 0,
    });
    // Every waiting message is readable through the messages API.
    const waitingId = (await fc.client.lrange(keys.flowControlWaiting('k'), 0, 0))[0]!;
    expect(await new PendingMessages(fc.client, keys).find(waitingId)).toMatchObject({ state: 'scheduled' });
  });

  it('when a key has a rate of 3 per second, then 3 start in each window and the rest wait for the next', async () => {
    const limits = { key: 'r', rate: 3, periodSeconds: 1 };
    await enqueue(...Array.from({ length: 7 }, (_, i) => message(limits, `r${i}`)));
    expect(await started()).toEqual(['r0', 'r1', 'r2']);
    const first = await fc.flows.get('r');
    expect(first).toMatchObject({ rateMax: 3, rateCount: 3, ratePeriod: 1, waitListSize: 4 });
    // Within the window the mover's tick starts nothing.
    expect((await fc.flows.tick('r')).started).toBe(0);
    const windowStart = Number(JSON.parse((await fc.client.hget(keys.flowControls, 'r'))!).ratePeriodStart);
    await waitFor('the next window', async () => (await serverNow()) >= windowStart + 1_000 || undefined, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    expect((await fc.flows.tick('r')).started).toBe(3);
    expect((await fc.flows.tick('r')).started).toBe(0);
    expect(await started()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(await fc.flows.get('r')).toMatchObject({ rateCount: 3, waitListSize: 1 });
  });

  it("when a message is delayed, then it waits in its key's due set and passes the limits once due", async () => {
    const limits = { key: 'd', parallelism: 5 };
    const now = await serverNow();
    await enqueue(message(limits, 'later', { notBefore: now + 300 }), message(limits, 'now'));
    expect(await started()).toEqual(['now']);
    expect(await fc.client.zcard(keys.flowControlDue('d'))).toBe(1);
    await waitFor(
      'the delayed message started',
      async () => (await fc.flows.tick('d')).started === 1 || undefined,
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    expect(await started()).toEqual(['now', 'later']);
  });

  it('when a key is paused, pinned, unpinned and reset, then each change takes effect at once and a missing key is reported', async () => {
    await fc.flows.update('p', { change: 'pause' });
    await enqueue(message({ key: 'p', parallelism: 1 }, 'a'), message({ key: 'p', parallelism: 1 }, 'b'));
    expect(await started()).toEqual([]);
    expect(await fc.flows.get('p')).toMatchObject({ isPaused: true, waitListSize: 2, parallelismMax: 1 });
    await fc.flows.update('p', { change: 'pin', parallelism: 2 });
    // A pinned parallelism is not changed by the messages that come after.
    await enqueue(message({ key: 'p', parallelism: 1 }, 'c'));
    expect(await fc.flows.get('p')).toMatchObject({ isPinnedParallelism: true, parallelismMax: 2 });
    await fc.flows.update('p', { change: 'resume' });
    expect(await started()).toEqual(['a', 'b']);
    await fc.flows.update('p', { change: 'unpin', parallelism: true, rate: false });
    await enqueue(message({ key: 'p', parallelism: 4 }, 'd'));
    expect(await fc.flows.get('p')).toMatchObject({ isPinnedParallelism: false, parallelismMax: 4 });
    expect(await started()).toEqual(['a', 'b', 'c', 'd']);

    await enqueue(...['x', 'y'].map((body) => message({ key: 'q', rate: 1, periodSeconds: 60 }, body)));
    expect((await fc.flows.get('q'))?.rateCount).toBe(1);
    await fc.flows.update('q', { change: 'resetRate' });
    expect(await started()).toEqual(['a', 'b', 'c', 'd', 'x', 'y']);
    expect(await fc.flows.update('missing', { change: 'resume' })).toBe(false);
    expect(await fc.flows.update('missing', { change: 'resetRate' })).toBe(false);
    expect(await fc.client.hexists(keys.flowControls, 'missing')).toBe(0);
  });

  it('when a started message finished but its release never reached Redis, then the tick frees its token and starts the next', async () => {
    const limits = { key: 't', parallelism: 1 };
    await enqueue(message(limits, 'first'), message(limits, 'second'));
    const entryId = (await fc.client.xrange(keys.stream, '-', '+'))[0]![0];
    const [firstId] = await fc.client.smembers(keys.flowControlActive('t'));
    await fc.messages.ensureGroup();
    // The delivery is recorded (entry and index gone), then the gateway dies before releasing.
    await fc.messages.complete(entryId, firstId!);
    expect(await fc.flows.tick('t')).toEqual({ freed: 1, started: 1, forgotten: false });
    expect(await started()).toEqual(['second']);
    expect(await fc.flows.tick('t')).toEqual({ freed: 0, started: 0, forgotten: false });
  });

  it("when the mover's pass runs over more keys than one script run takes, then every key is ticked once and the idle ones forgotten", async () => {
    const now = await serverNow();
    // 250 keys (three script runs of the pass): each with a message due in 3 s. A batch holds one
    // key's messages, so the 250 enqueues are sent at once rather than one round trip after
    // another, and assumed to finish within the 3 s (one enqueued after its time starts at once,
    // and the pass would find nothing to start for it); every fifth also idle-able.
    const dueAt = now + 3_000;
    const names = Array.from({ length: 250 }, (_, i) => `many${String(i).padStart(3, '0')}`);
    await Promise.all(
      names.map((name) => enqueue(message({ key: name, parallelism: 1 }, name, { notBefore: dueAt }))),
    );
    expect(await started()).toEqual([]);
    await enqueue(message({ key: 'idle', rate: 1, periodSeconds: 1 }, 'idle'));
    // The idle key's 1 s rate window started at its enqueue, no later than this.
    const idleWindowEndsBy = (await serverNow()) + 1_000;
    await fc.messages.ensureGroup();
    const idleEntry = (await fc.client.xrange(keys.stream, '-', '+'))[0]!;
    await fc.messages.complete(idleEntry[0], (await fc.client.smembers(keys.flowControlActive('idle')))[0]!);
    const readyAt = Math.max(dueAt, idleWindowEndsBy) + 200;
    await waitFor(
      "the delayed messages due and the idle key's 1 s window over",
      async () => (await serverNow()) >= readyAt || undefined,
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    const ticks = await fc.flows.tickAll();
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
    expect(await fc.flows.tickAll(() => false)).toEqual([]);
  });

  it("when the replica delivering a key's message dies, then its token stays held until a survivor claims, finishes and releases it", async () => {
    const limits = { key: 'dead', parallelism: 1 };
    await enqueue(message(limits, 'held'), message(limits, 'next'));
    await fc.messages.ensureGroup();
    const liveness = new ConsumerLiveness(fc.client, keys);
    const blocking = connectAsGateway(fc.server, { blocking: true });
    try {
      await liveness.heartbeat('replica-dead');
      const [entry] = await fc.messages.readNew(blocking, 'replica-dead', 10, 100);
      // The dead replica's entry is still on the stream: the tick must not hand its token out.
      expect(await fc.flows.tick('dead')).toMatchObject({ freed: 0, started: 0 });
      await new Promise((resolve) => setTimeout(resolve, 120));
      const claimed = await liveness.claimFromDead('replica-alive', 100, 10);
      expect(claimed?.deadConsumer).toBe('replica-dead');
      expect(claimed?.entries.map((e) => e.entryId)).toEqual([entry!.entryId]);
      const id = (await fc.client.smembers(keys.flowControlActive('dead')))[0]!;
      await fc.messages.complete(entry!.entryId, id);
      await fc.messages.releaseFlowControlToken(limits, id);
      expect(await started()).toEqual(['next']);
      expect(await fc.client.smembers(keys.flowControlActive('dead'))).not.toContain(id);
    } finally {
      blocking.disconnect();
    }
  });

  it('when a release comes for a message still on the stream, or comes twice, then no token in use is freed', async () => {
    const limits = { key: 'twice', parallelism: 1 };
    await enqueue(message(limits, 'first'), message(limits, 'second'), message(limits, 'third'));
    const [firstId] = await fc.client.smembers(keys.flowControlActive('twice'));
    await fc.messages.releaseFlowControlToken(limits, firstId!);
    expect(await started()).toEqual(['first']);
    const entryId = (await fc.client.xrange(keys.stream, '-', '+'))[0]![0];
    await fc.messages.ensureGroup();
    await fc.messages.complete(entryId, firstId!);
    await fc.messages.releaseFlowControlToken(limits, firstId!);
    await fc.messages.releaseFlowControlToken(limits, firstId!);
    expect(await started()).toEqual(['second']);
    expect(await fc.client.scard(keys.flowControlActive('twice'))).toBe(1);
  });
});

describe('flow-control tokens through a delivery worker', () => {
  const f = useDeliveryFixture('fc-worker');

  it('when attempts are delivered, retried, dead-lettered or cancelled, then each gives its token back and at most parallelism run at once', async () => {
    const { config, store: messages } = f.freshConfig({ workerConcurrency: 8 });
    const k: QueueKeys = queueKeys(config.keyPrefix);
    const inFlight = new InFlightGauge();
    let flakyFailed = false;
    f.destination.answer = (request) => {
      void inFlight.heldFor(40);
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
    expect(inFlight.most).toBe(2);
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
