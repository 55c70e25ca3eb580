/**
 * Schedules and URL groups, on this machine (issue 13):
 *   1. 10,000 schedules whose tick comes at the same instant: with two gateway replicas (processes
 *      with their delivery workers and schedule tickers on), how late each tick's message reaches
 *      the receiver after the tick (p50, p99, the last one), and exactly-once (no tick lost or
 *      doubled); then, one ticker alone in this process with no workers, how long firing 10,000
 *      due ticks takes and the Redis commands per tick;
 *   2. fan-out: one publish to a 100-endpoint URL group against a batch of the same 100 messages,
 *      time from the request to the last delivery, as a ratio;
 *   3. queues and flow control: throughput of a queue with parallelism 1, 10 and 100, and of
 *      publishes with Upstash-Flow-Control-Key of parallelism 1, 10 and 100, and of a queue of 10
 *      whose messages also carry a key of 10 (the cost of admission at the worker), against plain
 *      publishes to the same receiver (ratio), with a receiver that answers in 1 ms and in 50 ms,
 *      two replicas, and each message's time from its request to its delivery (p50, p99).
 * Each phase is repeated (QUEUE_FLOWS_BENCH_ROUNDS, default 3); medians with the spread (min-max).
 * QUEUE_FLOWS_BENCH_ONLY picks phases by name, comma-separated: schedules, fan-out, queues.
 * QUEUE_FLOWS_SCHEDULE_LEASES=10000,2000 runs phase 1 once per schedule claim lease (ms), in turn.
 * Redis persists with AOF everysec; everything is on loopback.
 *
 *   npx tsx bench/queue-flows.ts
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createSilentLogger } from '../observability/logger.js';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import { ScheduleTicker } from '../gateway/queue/workers/schedule-ticker.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import {
  callsBetween,
  commandCalls,
  countSentCommands,
  cpuSeconds,
  redisCpuSeconds,
} from './lib/process-usage.js';
import {
  startArrivalReceiver as startReceiver,
  type ArrivalReceiver as Receiver,
} from './lib/arrival-receiver.js';
import { median, medianSpreadText, quantile, round } from './lib/stats.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { queueApi } from './queue/queue-api.js';

const KEY_PREFIX = '{bench}:';
const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
const ROUNDS = Number(process.env.QUEUE_FLOWS_BENCH_ROUNDS ?? '3');
const ALL_PHASES = ['schedules', 'fan-out', 'queues'] as const;
/** QUEUE_FLOWS_BENCH_ONLY=schedules,queues runs those phases alone. */
const PHASES = new Set<string>(
  process.env.QUEUE_FLOWS_BENCH_ONLY?.split(',').map((p) => p.trim()) ?? ALL_PHASES,
);
const SCHEDULES = 10_000;
/**
 * The schedule claim leases to run phase 1 with, in turn (QUEUE_FLOWS_SCHEDULE_LEASES, ms,
 * comma-separated; default the gateway's 2000): 10000,2000 compares the old 10 s lease, which a
 * round never renews, with the renewed 2 s one, side by side.
 */
const SCHEDULE_CLAIM_LEASES = (process.env.QUEUE_FLOWS_SCHEDULE_LEASES ?? '2000').split(',').map(Number);
const ENDPOINTS = 100;
const keys = queueKeys(KEY_PREFIX);

function startGateway(target: QueueTarget, env: Record<string, string> = {}): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    env: buildQueueGatewayEnv(KEY_PREFIX, { SETTEE_QUEUE_WORKER_CONCURRENCY: '128', ...env }),
  });
}

/** Creates SCHEDULES schedules through the API (20 at a time); returns their ids. */
async function createSchedules(base: string, token: string, receiver: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SCHEDULES; i += 20) {
    const created = await Promise.all(
      Array.from({ length: Math.min(20, SCHEDULES - i) }, (_, j) =>
        queueApi(base, token, `/v2/schedules/${receiver}/s/${i + j}`, {
          method: 'POST',
          headers: { 'upstash-cron': '0 0 1 1 *', 'content-type': 'application/json' },
          body: '{"report":1}',
        }).then(async (r) => ((await r.json()) as { scheduleId: string }).scheduleId),
      ),
    );
    ids.push(...created);
  }
  return ids;
}

/** Makes every schedule's next tick `at`, as the clock reaching one shared minute would. */
async function setTicks(redis: Redis, ids: readonly string[], at: number): Promise<void> {
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.zadd(keys.scheduleTicks, 'XX', at, id);
  await pipeline.exec();
}

/** Messages per run of the queue phase, by receiver delay: a parallelism-1 queue at 50 ms takes 5 s for 100. */
const QUEUE_MESSAGES: Readonly<Record<number, number>> = { 1: 400, 50: 100 };
const QUEUE_SENDERS = 16;

/**
 * Sends `count` messages, QUEUE_SENDERS requests at a time alternating between the replicas, to
 * `route(i)`; resolves with the time from the first request to the last delivery and each
 * message's time from its request to its delivery.
 */
async function timeDeliveries(
  bases: readonly string[],
  token: string,
  receiver: Receiver,
  count: number,
  route: (i: number) => string,
  headers: Record<string, string> = {},
): Promise<{ totalMs: number; latencies: number[] }> {
  receiver.arrivals = [];
  const sentAt = new Map<string, number>();
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: QUEUE_SENDERS }, async () => {
      while (next < count) {
        const i = next++;
        const at = Date.now();
        const response = await queueApi(bases[i % bases.length]!, token, route(i), {
          method: 'POST',
          headers,
          body: `{"i":${i}}`,
        });
        sentAt.set(((await response.json()) as { messageId: string }).messageId, at);
      }
    }),
  );
  await waitFor(
    'every message delivered',
    async () => (receiver.arrivals.length >= count ? true : undefined),
    {
      timeoutMs: 120_000,
      intervalMs: 2,
    },
  );
  const latencies = receiver.arrivals.map((a) => a.at - (sentAt.get(a.messageId) ?? started));
  return { totalMs: Math.max(...receiver.arrivals.map((a) => a.at)) - started, latencies };
}

/** One way of sending phase 3's messages: where to, and with which headers. */
interface SendKind {
  name: string;
  route: (receiver: string, i: number) => string;
  headers?: Record<string, string>;
}

const PARALLELISMS = [1, 10, 100] as const;
const QUEUE_FLOW_QUEUE = 'qf';
const SEND_KINDS: readonly SendKind[] = [
  { name: 'publish', route: (receiver, i) => `/v2/publish/${receiver}/m/${i}` },
  ...PARALLELISMS.map((parallelism, q) => ({
    name: `queue p=${parallelism}`,
    route: (receiver: string, i: number) => `/v2/enqueue/q${q}/${receiver}/m/${i}`,
  })),
  ...PARALLELISMS.map((parallelism) => ({
    name: `flow p=${parallelism}`,
    route: (receiver: string, i: number) => `/v2/publish/${receiver}/m/${i}`,
    headers: {
      'upstash-flow-control-key': `flow-${parallelism}`,
      'upstash-flow-control-value': `parallelism=${parallelism}`,
    },
  })),
  // Both limits at 10: the cost of the second pass through the stream that admits a queue's
  // message to its key (admit-flow-control-entry.ts), against `queue p=10` and `flow p=10`.
  {
    name: 'queue+flow p=10',
    route: (receiver: string, i: number) => `/v2/enqueue/${QUEUE_FLOW_QUEUE}/${receiver}/m/${i}`,
    headers: { 'upstash-flow-control-key': 'queue-flow-10', 'upstash-flow-control-value': 'parallelism=10' },
  },
];

/**
 * 3. Queues and flow-control keys of parallelism 1, 10 and 100, and a queue and key both of 10,
 * against plain publishes, receivers at 1 ms and 50 ms.
 */
async function benchQueues(bases: readonly string[], token: string, receiver: Receiver): Promise<void> {
  const kinds = SEND_KINDS.map((kind) => kind.name);
  for (const [i, parallelism] of PARALLELISMS.entries())
    await queueApi(bases[0]!, token, '/v2/queues', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queueName: `q${i}`, parallelism }),
    });
  await queueApi(bases[0]!, token, '/v2/queues', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queueName: QUEUE_FLOW_QUEUE, parallelism: 10 }),
  });
  for (const delayMs of [1, 50]) {
    receiver.delayMs = delayMs;
    const count = QUEUE_MESSAGES[delayMs]!;
    const rate = new Map<string, number[]>(kinds.map((k) => [k, []]));
    const p50 = new Map<string, number[]>(kinds.map((k) => [k, []]));
    const p99 = new Map<string, number[]>(kinds.map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r += 1) {
      // Side by side: every kind once per round, in turn.
      for (const kind of SEND_KINDS) {
        const route = (i: number) => kind.route(receiver.url, i);
        const { totalMs, latencies } = await timeDeliveries(
          bases,
          token,
          receiver,
          count,
          route,
          kind.headers,
        );
        rate.get(kind.name)!.push((count * 1000) / totalMs);
        p50.get(kind.name)!.push(quantile(latencies, 0.5));
        p99.get(kind.name)!.push(quantile(latencies, 0.99));
      }
    }
    const plain = median(rate.get('publish')!);
    console.log(
      `queues, receiver answering in ${delayMs} ms, ${count} messages, two replicas   median (min-max) over ${ROUNDS}`,
    );
    console.log('  kind              messages/s          / publish   request to delivery p50 ms    p99 ms');
    for (const kind of kinds)
      console.log(
        `  ${kind.padEnd(16)}  ${medianSpreadText(rate.get(kind)!, 0).padEnd(18)}  ${String(round(median(rate.get(kind)!) / plain, 3)).padEnd(10)}  ${medianSpreadText(p50.get(kind)!, 0).padEnd(28)}  ${medianSpreadText(p99.get(kind)!, 0)}`,
      );
    console.log('');
  }
  receiver.delayMs = 0;
}

/** Commands a benchmark's own reads add to INFO commandstats, left out of the per-tick counts. */
const BENCH_COMMANDS = /^(info|ping|config|xrange)/;

const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

/** Where one round's time and work went, from the events stream, /proc and INFO. */
interface TickRound {
  /** Each tick's message at the receiver, ms after the tick. */
  late: number[];
  /** The first and the last tick's message stored (its CREATED event), ms after the tick. */
  firstFired: number;
  lastFired: number;
  /** Deliveries per second from the first arrival to the last. */
  deliveryRate: number;
  /** CPU seconds of both replicas, Redis, and this process (the receiver). */
  cpu: { gateways: number; redis: number; receiver: number };
  /** Redis commands per tick, by command, fire and delivery on both replicas. */
  calls: Map<string, number>;
}

/** When the tick messages' CREATED events were written (their stream ids are Redis server times). */
async function firingSpan(redis: Redis, from: number): Promise<{ first: number; last: number }> {
  let first = Infinity;
  let last = -Infinity;
  let cursor = String(from);
  for (;;) {
    const page = await redis.xrange(keys.events, cursor, '+', 'COUNT', 5_000);
    for (const [id, fields] of page) {
      if (!fields[1]?.includes('"state":"CREATED"')) continue;
      const at = Number(id.split('-')[0]);
      first = Math.min(first, at);
      last = Math.max(last, at);
    }
    if (page.length < 5_000) return { first, last };
    cursor = `(${page[page.length - 1]![0]}`;
  }
}

/** One round: every schedule's tick set to come 2 s from now, then wait for every delivery. */
async function tickRound(
  inspect: Redis,
  receiver: Receiver,
  ids: readonly string[],
  gateways: readonly QueueGatewayProcess[],
): Promise<TickRound> {
  receiver.arrivals = [];
  const tickAt = Date.now() + 2_000;
  const callsBefore = await commandCalls(inspect);
  const cpuBefore = {
    gateways: sum(gateways.map((g) => cpuSeconds(g.proc.pid))),
    redis: await redisCpuSeconds(inspect),
    receiver: process.cpuUsage(),
  };
  await setTicks(inspect, ids, tickAt);
  await waitFor(
    'every tick delivered',
    async () => (receiver.arrivals.length >= SCHEDULES ? true : undefined),
    {
      timeoutMs: 120_000,
      intervalMs: 10,
    },
  );
  const receiverCpu = process.cpuUsage(cpuBefore.receiver);
  // Time for a doubled tick to show up, were there one.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const perSchedule = new Map<string, number>();
  for (const a of receiver.arrivals)
    perSchedule.set(a.scheduleId ?? '', (perSchedule.get(a.scheduleId ?? '') ?? 0) + 1);
  if (receiver.arrivals.length !== SCHEDULES || perSchedule.size !== SCHEDULES)
    throw new Error(`${receiver.arrivals.length} deliveries for ${perSchedule.size} schedules`);
  const cpu = {
    gateways: sum(gateways.map((g) => cpuSeconds(g.proc.pid))) - cpuBefore.gateways,
    redis: (await redisCpuSeconds(inspect)) - cpuBefore.redis,
    receiver: (receiverCpu.user + receiverCpu.system) / 1e6,
  };
  const calls = callsBetween(callsBefore, await commandCalls(inspect), BENCH_COMMANDS);
  // The tick setting's own ZADDs are the bench's.
  calls.set('zadd', (calls.get('zadd') ?? 0) - SCHEDULES);
  for (const [name, count] of calls) calls.set(name, count / SCHEDULES);
  const fired = await firingSpan(inspect, tickAt);
  const arrivals = receiver.arrivals.map((a) => a.at);
  const firstArrival = Math.min(...arrivals);
  const lastArrival = Math.max(...arrivals);
  return {
    late: arrivals.map((at) => at - tickAt),
    firstFired: fired.first - tickAt,
    lastFired: fired.last - tickAt,
    deliveryRate: (SCHEDULES * 1000) / Math.max(1, lastArrival - firstArrival),
    cpu,
    calls,
  };
}

/**
 * 1. 10,000 schedules ticking at one instant: delivered by two replicas, then fired by one ticker
 * in this process with no delivery. Returns with the gateways stopped.
 */
async function benchSchedules(
  inspect: Redis,
  receiver: Receiver,
  target: QueueTarget,
  gateways: QueueGatewayProcess[],
  claimLeaseMs: number,
): Promise<void> {
  const base = `${gateways[0]!.baseUrl}/queue/bench/db`;
  const ids = await createSchedules(base, target.token, receiver.url);

  const rounds: TickRound[] = [];
  const load: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    load.push(os.loadavg()[0]!);
    rounds.push(await tickRound(inspect, receiver, ids, gateways));
  }
  await Promise.all(gateways.map((g) => g.proc.stop()));
  gateways.length = 0;

  // One ticker alone on its own connection: firing time, and Redis work per tick both as the
  // commands it sends and as the commands Redis runs (its scripts' own included), deliveries off.
  const fireMs: number[] = [];
  const sentPerTick: number[] = [];
  const runPerTick: number[] = [];
  const tickerConnection = inspect.duplicate();
  await tickerConnection.ping();
  const sent = countSentCommands(tickerConnection);
  const ticker = new ScheduleTicker({
    redis: tickerConnection,
    keys,
    pollIntervalMs: 1_000,
    claimLeaseMs,
    maxQueues: () => 10,
    logger: createSilentLogger(),
  });
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      await inspect.del(keys.stream, keys.streamIndex, keys.events);
      await setTicks(inspect, ids, Date.now() - 1);
      const before = await commandCalls(inspect);
      const sentBefore = sent.sent;
      const started = performance.now();
      const fired = await ticker.fireDue();
      fireMs.push(performance.now() - started);
      if (fired !== SCHEDULES) throw new Error(`fired ${fired} of ${SCHEDULES}`);
      sentPerTick.push((sent.sent - sentBefore) / SCHEDULES);
      runPerTick.push(
        sum(callsBetween(before, await commandCalls(inspect), BENCH_COMMANDS).values()) / SCHEDULES,
      );
    }
  } finally {
    tickerConnection.disconnect();
  }
  await inspect.del(keys.stream, keys.streamIndex);

  const of = (pick: (r: TickRound) => number, digits = 0) => medianSpreadText(rounds.map(pick), digits);
  const lateAt = (q: number) => (r: TickRound) => quantile(r.late, q);
  console.log(
    `${SCHEDULES} schedules ticking at the same instant, claim lease ${claimLeaseMs} ms        median (min-max) over ${ROUNDS} rounds, load average ${medianSpreadText(load, 1)}`,
  );
  console.log(`  two replicas, delivered: lateness p50 ms          ${of(lateAt(0.5))}`);
  console.log(`                           lateness p99 ms          ${of(lateAt(0.99))}`);
  console.log(`                           last tick delivered ms   ${of(lateAt(1))}   goal: under 5000`);
  console.log(`    where it went:         first tick fired ms      ${of((r) => r.firstFired)}`);
  console.log(`                           last tick fired ms       ${of((r) => r.lastFired)}`);
  console.log(`                           deliveries/s             ${of((r) => r.deliveryRate)}`);
  console.log(
    `                           CPU s: replicas ${of((r) => r.cpu.gateways, 1)}, Redis ${of((r) => r.cpu.redis, 1)}, receiver ${of((r) => r.cpu.receiver, 1)}`,
  );
  console.log(
    `                           Redis commands per tick  ${of((r) => sum(r.calls.values()), 1)} (fire and deliver, both replicas)`,
  );
  const names = [...new Set(rounds.flatMap((r) => [...r.calls.keys()]))].sort();
  console.log(
    `                             ${names.map((n) => `${n} ${of((r) => r.calls.get(n) ?? 0, 2)}`).join(', ')}`,
  );
  console.log(`  one ticker, no delivery: firing all ticks ms      ${medianSpreadText(fireMs, 0)}`);
  console.log(`                           commands sent per tick   ${medianSpreadText(sentPerTick, 3)}`);
  console.log(
    `                           commands Redis ran/tick  ${medianSpreadText(runPerTick, 2)} (the scripts' own included)\n`,
  );
  await inspect.del(keys.schedules, keys.scheduleMessages, keys.scheduleTicks, keys.scheduleLastTicks);
}

/** 2. Fan-out to a 100-endpoint group against a batch of the same 100 messages, one replica. */
async function benchFanOut(base: string, token: string, receiver: Receiver): Promise<void> {
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({ url: `${receiver.url}/fan/${i}` }));
  await queueApi(base, token, '/v2/topics/fan/endpoints', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ endpoints }),
  });
  const batchBody = JSON.stringify(endpoints.map((e) => ({ destination: e.url, body: '{"n":1}' })));
  const groupMs: number[] = [];
  const batchMs: number[] = [];
  const timeToLast = async (send: () => Promise<Response>): Promise<number> => {
    receiver.arrivals = [];
    const started = Date.now();
    await send();
    await waitFor('every endpoint', async () => (receiver.arrivals.length >= ENDPOINTS ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 1,
    });
    return Math.max(...receiver.arrivals.map((a) => a.at)) - started;
  };
  for (let round = 0; round < ROUNDS * 3; round += 1) {
    groupMs.push(
      await timeToLast(() => queueApi(base, token, '/v2/publish/fan', { method: 'POST', body: '{"n":1}' })),
    );
    batchMs.push(
      await timeToLast(() =>
        queueApi(base, token, '/v2/batch', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: batchBody,
        }),
      ),
    );
  }
  console.log(
    `fan-out to ${ENDPOINTS} endpoints, request to last delivery     median (min-max) over ${ROUNDS * 3}`,
  );
  console.log(`  publish to the URL group ms                        ${medianSpreadText(groupMs, 0)}`);
  console.log(
    `  batch of the same ${ENDPOINTS} messages ms                  ${medianSpreadText(batchMs, 0)}`,
  );
  console.log(
    `  group / batch                                      ${round(median(groupMs) / median(batchMs), 2)}`,
  );
  console.log('');
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-flows-bench-'));
  let redis: RedisServer | undefined;
  let inspect: Redis | undefined;
  let receiver: Receiver | undefined;
  const gateways: QueueGatewayProcess[] = [];
  try {
    redis = await startRedis({ dataDir });
    inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    receiver = await startReceiver();
    // The free plan's 10 schedules would not hold the bench's 10,000 (spec.limits.maxSchedules).
    const target = testQueueTarget(redis, {
      namespace: 'bench',
      signingKey: SIGNING_KEY,
      limits: { maxSchedules: SCHEDULES },
    });
    console.log(
      `queue flows benchmark: ${os.cpus().length} CPUs, ${ROUNDS} rounds, Redis ${(await inspect.info('server')).match(/redis_version:(\S+)/)?.[1]} with AOF everysec\n`,
    );
    if (PHASES.has('schedules'))
      for (const leaseMs of SCHEDULE_CLAIM_LEASES) {
        const env = { SETTEE_QUEUE_SCHEDULE_CLAIM_LEASE_MS: String(leaseMs) };
        gateways.push(await startGateway(target, env), await startGateway(target, env));
        await benchSchedules(inspect, receiver, target, gateways, leaseMs);
      }
    if (PHASES.has('fan-out')) {
      gateways.push(await startGateway(target));
      await benchFanOut(`${gateways[0]!.baseUrl}/queue/bench/db`, target.token, receiver);
      await Promise.all(gateways.map((g) => g.proc.stop()));
      gateways.length = 0;
    }
    if (PHASES.has('queues')) {
      gateways.push(await startGateway(target), await startGateway(target));
      await benchQueues(
        gateways.map((g) => `${g.baseUrl}/queue/bench/db`),
        target.token,
        receiver,
      );
    }
  } finally {
    await Promise.all(gateways.map((g) => g.proc.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
