/**
 * Phase 1 of bench/queue-flows.ts: 10,000 schedules whose tick comes at the same instant, delivered
 * by two gateway replicas (lateness, exactly-once, where the time and the Redis work went), then
 * fired by one ticker alone in this process with no delivery.
 */
import os from 'node:os';
import type { Redis } from 'ioredis';
import { createSilentLogger } from '../../observability/logger.js';
import { waitFor } from '../../local/wait.js';
import type { QueueTarget } from '../../gateway/queue/core/binding-registry.js';
import { ScheduleTicker } from '../../gateway/queue/workers/schedule-ticker.js';
import type { QueueGatewayProcess } from '../../test/helpers/queue/spawn-queue-gateway.js';
import { callsBetween } from '../../test/helpers/calls-between.js';
import { commandCalls, countSentCommands, cpuSeconds, redisCpuSeconds } from '../lib/process-usage.js';
import type { ArrivalReceiver as Receiver } from '../lib/arrival-receiver.js';
import { medianSpreadText, quantile } from '../lib/stats.js';
import { queueApi } from '../queue/queue-api.js';
import { keys, ROUNDS } from './flows-settings.js';

export const SCHEDULES = 10_000;

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
export async function benchSchedules(
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
