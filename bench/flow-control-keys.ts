/**
 * The mover's pass over flow-control keys with many live keys (issue 13): QStash sets no limit on
 * the number of keys, and the binding's mover (one replica, every 250 ms) ticks each of them.
 * For 100, 1,000 and 5,000 keys, each with messages started, waiting on a rate limit and delayed:
 *   1. the pass itself, no worker running: its duration (p50, p99 over PASSES passes), the Redis
 *      commands it sends (round trips) and runs (INFO commandstats, inside scripts included) and
 *      the Redis CPU it costs, for the mover's pass (several keys per script run) against one
 *      script run per key (the pass before batching), side by side in the same round;
 *   2. with a delivery worker (and its mover) running against a counting receiver: how late a
 *      rate-limited message reaches the receiver after its key's next rate window opens.
 * Sizes alternate in order round by round; FLOW_KEYS_BENCH_ROUNDS rounds (default 3); medians with
 * the spread (min-max) over the rounds. Everything is on loopback; Redis does not persist.
 *
 *   npx tsx bench/flow-control-keys.ts
 */
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import { createSilentLogger } from '../observability/logger.js';
import { DeliveryWorker } from '../gateway/queue/workers/delivery-worker.js';
import { createHttpDeliverer } from '../gateway/queue/workers/http-delivery.js';
import type { FlowControlRecord } from '../gateway/queue/core/flow-control.js';
import { FlowControlStore } from '../gateway/queue/stores/flow-control-store.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import { createMessage, type QueueMessage } from '../gateway/queue/core/message.js';
import { compileAddressPolicy } from '../gateway/queue/core/address-policy.js';
import { createGuardedAgents } from '../gateway/queue/workers/guarded-agents.js';
import { testQueueConfig } from '../test/helpers/queue/queue-config.js';
import { connectAsGateway, connectTestRedis } from '../test/helpers/queue/redis-snapshot.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { startCountingReceiver, type CountingReceiver } from './queue/counting-receiver.js';
import { callsBetween } from '../test/helpers/calls-between.js';
import { commandCalls, countSentCommands, redisCpuSeconds } from './lib/process-usage.js';
import { median, medianSpreadText, quantile, round } from './lib/stats.js';

const KEY_PREFIX = '{fckeys}:';
const keys = queueKeys(KEY_PREFIX);
const SIZES = [100, 1_000, 5_000] as const;
const ROUNDS = Number(process.env.FLOW_KEYS_BENCH_ROUNDS ?? '3');
const PASSES = 20;
/** Keys whose second message's lateness is measured, per size and round. */
const PROBES = 20;
/** Not a divisor of the mover's 250 ms. */
const PROBE_GAP_MS = 37;
/** The background keys' window: long, so their waiting messages stay waiting through a round. */
const BACKGROUND_PERIOD_S = 600;
/** Commands a benchmark's own reads add to INFO commandstats. */
const BENCH_COMMANDS = /^(info|ping|config|hkeys|flushdb|time|hget)$/;

/** How one pass over every key is run: the mover's own, or one script run per key. */
interface PassKind {
  name: string;
  pass(store: FlowControlStore): Promise<void>;
}

const PER_KEY = 'one key per script';
const PASS_KINDS: readonly PassKind[] = [
  {
    name: "the mover's pass",
    async pass(store) {
      await store.tickAll();
    },
  },
  {
    name: PER_KEY,
    async pass(store) {
      for (const key of await store.names()) await store.tick(key);
    },
  },
];

function flowMessage(
  key: string,
  body: object,
  limits: { rate: number; periodSeconds: number },
  notBefore?: number,
): QueueMessage {
  return {
    ...createMessage({
      destination: '',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(body)),
      retries: 0,
      flowControl: { key, ...limits },
    }),
    ...(notBefore !== undefined && { notBefore }),
  };
}

/**
 * `count` keys of rate 1 per BACKGROUND_PERIOD_S, each with three messages now (one started, two
 * waiting on the rate) and one delayed by an hour; 100 enqueues in flight at a time.
 */
async function seedKeys(store: FlowControlStore, destination: string, count: number): Promise<void> {
  const limits = { rate: 1, periodSeconds: BACKGROUND_PERIOD_S };
  const hour = Date.now() + 3_600_000;
  for (let i = 0; i < count; i += 100)
    await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, (_, j) => {
        const key = `k${i + j}`;
        const batch = [0, 1, 2].map((n) => ({ ...flowMessage(key, { n }, limits), destination }));
        batch.push({ ...flowMessage(key, { n: 3 }, limits, hour), destination });
        return store.enqueue(batch, { deduplicationWindowMs: 0 });
      }),
    );
}

interface PassFigures {
  durationsMs: number[];
  /** Per pass. */
  sent: number;
  run: number;
  redisCpuMs: number;
}

async function measurePasses(redis: Redis, counted: Redis, kind: PassKind): Promise<PassFigures> {
  const store = new FlowControlStore(counted, keys);
  const counter = countSentCommands(counted);
  const callsBefore = await commandCalls(redis);
  const cpuBefore = await redisCpuSeconds(redis);
  const sentBefore = counter.sent;
  const durationsMs: number[] = [];
  for (let i = 0; i < PASSES; i += 1) {
    const started = performance.now();
    await kind.pass(store);
    durationsMs.push(performance.now() - started);
  }
  const cpu = (await redisCpuSeconds(redis)) - cpuBefore;
  const calls = callsBetween(callsBefore, await commandCalls(redis), BENCH_COMMANDS);
  let run = 0;
  for (const [name, count] of calls) if (name !== 'evalsha' && name !== 'hkeys') run += count;
  return {
    durationsMs,
    sent: (counter.sent - sentBefore) / PASSES,
    run: run / PASSES,
    redisCpuMs: (cpu * 1000) / PASSES,
  };
}

/**
 * PROBES keys of rate 1 per second: the first message starts at once and opens the window; the
 * second, whose body carries the time the next window opens as `sentAt`, waits for it. The
 * receiver's latency of the second is how late it came after its window opened.
 */
async function probeLateness(
  redis: Redis,
  store: FlowControlStore,
  receiver: CountingReceiver,
  size: number,
): Promise<number[]> {
  receiver.reset();
  const limits = { rate: 1, periodSeconds: 1 };
  // One after another, PROBE_GAP_MS apart, so the windows open at different points of the mover's cycle.
  for (let i = 0; i < PROBES; i += 1) {
    const key = `probe${size}-${i}`;
    await store.enqueue([{ ...flowMessage(key, {}, limits), destination: receiver.url }], {
      deduplicationWindowMs: 0,
    });
    const record = JSON.parse((await redis.hget(keys.flowControls, key))!) as FlowControlRecord;
    const opens = record.ratePeriodStart + 1_000;
    await store.enqueue([{ ...flowMessage(key, { sentAt: opens }, limits), destination: receiver.url }], {
      deduplicationWindowMs: 0,
    });
    await new Promise((resolve) => setTimeout(resolve, PROBE_GAP_MS));
  }
  await waitFor(
    'every probe delivered',
    async () => (receiver.latenciesMs.length >= PROBES ? true : undefined),
    {
      timeoutMs: 60_000,
      intervalMs: 5,
    },
  );
  return [...receiver.latenciesMs];
}

interface SizeFigures {
  passes: Map<string, PassFigures[]>;
  lateness: number[][];
}

async function benchSize(
  server: RedisServer,
  redis: Redis,
  receiver: CountingReceiver,
  size: number,
  figures: SizeFigures,
  roundIndex: number,
): Promise<void> {
  await redis.flushdb();
  const store = new FlowControlStore(redis, keys);
  await seedKeys(store, receiver.url, size);
  // 1. The pass alone (no worker: the started messages stay on the stream, holding their tokens).
  const counted = connectTestRedis(server);
  try {
    // Side by side, in turns: the first kind of a round does not always meet the colder caches.
    for (const kind of roundIndex % 2 === 0 ? PASS_KINDS : [...PASS_KINDS].reverse())
      figures.passes.get(kind.name)!.push(await measurePasses(redis, counted, kind));
  } finally {
    counted.disconnect();
  }
  // 2. A worker delivers the started messages, then its mover opens the probes' windows.
  const agents = createGuardedAgents({ policy: compileAddressPolicy(['127.0.0.0/8']) });
  const own = connectAsGateway(server, { blocking: false });
  const worker = new DeliveryWorker({
    target: testQueueTarget(server),
    redis: own,
    config: testQueueConfig({ keyPrefix: KEY_PREFIX, pollIntervalMs: 1_000, workerConcurrency: 64 }),
    deliverer: createHttpDeliverer({ agents, maxRedirects: 0 }),
    logger: createSilentLogger(),
  });
  try {
    receiver.reset();
    worker.start();
    await waitFor(
      'the started messages delivered',
      async () => (receiver.received >= size ? true : undefined),
      {
        timeoutMs: 120_000,
        intervalMs: 20,
      },
    );
    figures.lateness.push(await probeLateness(redis, store, receiver, size));
  } finally {
    await worker.stop(5_000);
    own.disconnect();
    agents.http.destroy();
  }
}

function report(size: number, figures: SizeFigures): void {
  console.log(`${size} keys, ${PASSES} passes per round, median (min-max) over ${ROUNDS} rounds`);
  console.log(
    '  pass                 p50 ms            p99 ms            sent/pass       run in Redis/pass   Redis CPU ms/pass',
  );
  const baseline = median(figures.passes.get(PER_KEY)!.map((f) => median(f.durationsMs)));
  for (const kind of PASS_KINDS) {
    const rounds = figures.passes.get(kind.name)!;
    const p50 = rounds.map((f) => median(f.durationsMs));
    console.log(
      `  ${kind.name.padEnd(19)}  ${medianSpreadText(p50).padEnd(16)}  ${medianSpreadText(rounds.map((f) => quantile(f.durationsMs, 0.99))).padEnd(16)}  ${medianSpreadText(
        rounds.map((f) => f.sent),
        0,
      ).padEnd(14)}  ${medianSpreadText(
        rounds.map((f) => f.run),
        0,
      ).padEnd(
        18,
      )}  ${medianSpreadText(rounds.map((f) => f.redisCpuMs))}   (p50 / one key per script: ${round(median(p50) / baseline, 3)})`,
    );
  }
  const p50 = figures.lateness.map((l) => median(l));
  const p99 = figures.lateness.map((l) => quantile(l, 0.99));
  const max = figures.lateness.map((l) => Math.max(...l));
  console.log(
    `  rate-limited message after its window opened, ms: p50 ${medianSpreadText(p50, 0)}, p99 ${medianSpreadText(p99, 0)}, max ${medianSpreadText(max, 0)}`,
  );
  console.log('');
}

async function main(): Promise<void> {
  const server = await startRedis();
  const redis = connectTestRedis(server);
  const receiver = await startCountingReceiver({ recordLatency: true });
  const figures = new Map<number, SizeFigures>(
    SIZES.map((size) => [size, { passes: new Map(PASS_KINDS.map((k) => [k.name, []])), lateness: [] }]),
  );
  try {
    for (let r = 0; r < ROUNDS; r += 1) {
      // Alternating order, so no size always runs on a machine warmed (or loaded) by the one before.
      const order = r % 2 === 0 ? SIZES : [...SIZES].reverse();
      for (const size of order) await benchSize(server, redis, receiver, size, figures.get(size)!, r);
    }
    for (const size of SIZES) report(size, figures.get(size)!);
  } finally {
    await receiver.close();
    redis.disconnect();
    await server.stop();
  }
}

await main();
