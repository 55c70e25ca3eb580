/**
 * The webhook queue's throughput and latency, end to end on this machine:
 *   1. publishes accepted per second through the API (single and batch) next to direct Redis XADDs
 *      of the same messages, with p50/p99 latency, as ratios (delivery workers off);
 *   2. deliveries per second sustained, from a stored backlog to the receiver's 2xx;
 *   3. publish-to-delivery latency p50/p99 at a fixed offered rate (open model: publishes leave on
 *      schedule whether or not earlier ones have returned), and Redis commands per message;
 *   4. the signing cost per message.
 * Each is set beside a floor measured in the same run (bench/queue/floor-queue.ts: a bare Node.js
 * publish server and delivery loop on the same Redis): CPU per publish and per delivery as ratios
 * to the floor's, single publishes and the latency in rounds that alternate gateway and floor, as
 * medians with their spread. Both sides are warmed up first (WARMUP_SECONDS of the same load,
 * uncounted): a process's first second runs its code cold, which measured the JIT rather than the
 * queue (a gateway's first round at 1,000/s had p99 1.8 s, its later ones 17-26 ms, in one run).
 * The summary checks each figure against its goal (issue 26) and flags the ones missed.
 * Redis persists with AOF everysec; the receiver and everything else are on loopback.
 *
 *   npx tsx bench/queue-publish.ts            (QUEUE_BENCH_SECONDS=5 per measured phase,
 *                                              QUEUE_BENCH_ROUNDS=3 latency rounds by default)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { MESSAGE_FIELD, queueKeys } from '../gateway/queue/core/keys.js';
import { encodeMessage } from '../gateway/queue/core/message-codec.js';
import { createMessage } from '../gateway/queue/core/message.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { callsBetween, commandCalls, cpuSeconds } from './lib/process-usage.js';
import { median, quantile, round, spread } from './lib/stats.js';
import { alternateRounds, medianRun, type MeasuredPublishRun } from './lib/alternating-rounds.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { startCountingReceiver, type CountingReceiver } from './queue/counting-receiver.js';
import { startFloorQueue, type FloorSpec } from './queue/floor-queue.js';
import { GC_TRACE_FLAGS, GcCount, garbagePerMessage, type Garbage } from './queue/gc-count.js';
import { offerAtFixedRate } from './queue/offer-at-rate.js';
import { runPublishLoad } from './queue/publish-load.js';
import { signingCostUs } from './queue/signing-cost.js';

const KEY_PREFIX = '{bench}:';
const FLOOR_PREFIX = '{floor}:';
const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
const SECONDS = Number(process.env.QUEUE_BENCH_SECONDS ?? '5');
const ROUNDS = Number(process.env.QUEUE_BENCH_ROUNDS ?? '3');
/** Uncounted load each side gets before its first measured round (the JIT's warm-up). */
const WARMUP_SECONDS = 1;
const CONNECTIONS = 64;
const BATCH = 100;
const BACKLOG = 20_000;
const OFFERED_RATE = 1_000;
const CONCURRENCY = 128;
const BODY = JSON.stringify({ event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' });
/** Commands the bench itself sends or that no message causes. */
const NOT_PER_MESSAGE = /^(info|ping|xinfo|xlen|zrangebyscore|config)/;

/** Issue 26's goals for this bench. */
const GOALS = {
  latencyP50Ms: 2,
  latencyP99Ms: 10,
  cpuToFloor: 1.5,
  singlePublishes: 30_000,
  batchedPublishes: 100_000,
  deliveries: 15_000,
};

function startGateway(target: QueueTarget, workers: boolean, gc?: GcCount): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    bundled: true,
    workers,
    ...(gc ? { nodeFlags: GC_TRACE_FLAGS, onLine: gc.onLine } : {}),
    env: buildQueueGatewayEnv(KEY_PREFIX, {
      SETTEE_QUEUE_WORKER_CONCURRENCY: String(CONCURRENCY),
      SETTEE_QUEUE_POLL_INTERVAL_MS: '200',
      SETTEE_QUEUE_MAX_BATCH_SIZE: String(BATCH),
    }),
  });
}

const us = (value: number): string => `${round(value / 1_000, 2)} ms`;

/** A publish load run, with the CPU the serving process spent per message stored on `stream`. */
async function publishRun(
  load: Parameters<typeof runPublishLoad>[0],
  pid: number,
  inspect: Redis,
  stream: string,
): Promise<MeasuredPublishRun> {
  const [cpu, stored] = [cpuSeconds(pid), await inspect.xlen(stream)];
  const result = await runPublishLoad(load);
  const cpuUs = ((cpuSeconds(pid) - cpu) * 1e6) / ((await inspect.xlen(stream)) - stored);
  return { ...result, cpuUs };
}

async function storeBacklog(inspect: Redis, stream: string, destination: string): Promise<void> {
  await inspect.del(stream);
  const pipeline = inspect.pipeline();
  for (let i = 0; i < BACKLOG; i++) {
    const message = createMessage({
      destination,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(BODY),
      retries: 3,
    });
    pipeline.xadd(stream, '*', MESSAGE_FIELD, encodeMessage(message));
  }
  await pipeline.exec();
}

/**
 * Drains the stored backlog with a just started process (`pid`): deliveries a second, first to
 * last, and its CPU per delivery from the moment it listens (what it delivered before is left out).
 */
async function drain(receiver: CountingReceiver, pid: number): Promise<{ perSecond: number; cpuUs: number }> {
  const [cpu, before] = [cpuSeconds(pid), receiver.received];
  await waitFor('the backlog to drain', async () => (receiver.received >= BACKLOG ? true : undefined), {
    timeoutMs: 300_000,
    intervalMs: 20,
  });
  return {
    perSecond: ((BACKLOG - 1) / (receiver.lastAt - receiver.firstAt)) * 1_000,
    cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / (BACKLOG - before),
  };
}

/**
 * One latency round at OFFERED_RATE through `publishUrl` for `seconds`: p50/p99, Redis commands
 * per message, and the serving process's garbage per message (`gc`).
 */
async function latencyRound(
  receiver: CountingReceiver,
  inspect: Redis,
  {
    publishUrl,
    token,
    gc,
    seconds = SECONDS,
  }: { publishUrl: string; token: string; gc: GcCount; seconds?: number },
): Promise<{ p50: number; p99: number; commands: number; byCommand: string; failed: number } & Garbage> {
  receiver.reset();
  const before = await commandCalls(inspect);
  const garbageBefore = gc.totals();
  const offered = await offerAtFixedRate({ publishUrl, token, rate: OFFERED_RATE, seconds });
  await waitFor(
    'every offered message',
    async () => (receiver.received >= offered.sent - offered.failed ? true : undefined),
    { timeoutMs: 60_000 },
  );
  const calls = callsBetween(before, await commandCalls(inspect), NOT_PER_MESSAGE);
  return {
    p50: quantile(receiver.latenciesMs, 0.5),
    p99: quantile(receiver.latenciesMs, 0.99),
    commands: [...calls.values()].reduce((a, b) => a + b, 0) / receiver.received,
    // What the commands are, by name, per message: the guarantees each one pays for are in docs/queue.md.
    byCommand: [...calls]
      .filter(([, count]) => count / receiver.received >= 0.05)
      .sort(([, a], [, b]) => b - a)
      .map(([name, count]) => `${name} ${round(count / receiver.received, 2)}`)
      .join(', '),
    failed: offered.failed,
    ...garbagePerMessage(garbageBefore, gc.totals(), receiver.received),
  };
}

/** A summary line: the figure, its goal, and MISSED when it is not met. */
function goalLine(name: string, figure: string, goal: string, met: boolean): void {
  console.log(`  ${name.padEnd(52)} ${figure.padEnd(28)} goal ${goal.padEnd(12)} ${met ? 'met' : 'MISSED'}`);
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-bench-'));
  let redis: RedisServer | undefined;
  let gateway: QueueGatewayProcess | undefined;
  let floor: Awaited<ReturnType<typeof startFloorQueue>> | undefined;
  let receiver: CountingReceiver | undefined;
  let inspect: Redis | undefined;
  try {
    // A dataDir turns on the append-only file with appendfsync everysec (local/redis-server.ts).
    redis = await startRedis({ dataDir });
    inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    receiver = await startCountingReceiver({ recordLatency: true });
    const target = testQueueTarget(redis, { namespace: 'bench', signingKey: SIGNING_KEY });
    const stream = queueKeys(KEY_PREFIX).stream;
    const floorStream = queueKeys(FLOOR_PREFIX).stream;
    const floorSpec: FloorSpec = {
      redis: { host: redis.host, port: redis.port, password: redis.password },
      keyPrefix: FLOOR_PREFIX,
      token: target.token,
      signingKey: SIGNING_KEY,
      concurrency: 0,
    };
    const loadAtStart = os.loadavg()[0]!;
    console.log(
      `queue benchmark: ${os.cpus().length} CPUs, load average ${round(loadAtStart, 1)}, ${SECONDS} s per phase, ${ROUNDS} latency rounds, Redis ${(await inspect.info('server')).match(/redis_version:(\S+)/)?.[1]} with AOF everysec\n`,
    );

    // 1. Publishing alone, the gateway's workers and the floor's delivery loop off.
    gateway = await startGateway(target, false);
    floor = await startFloorQueue(floorSpec);
    const queueUrl = `${gateway.baseUrl}/queue/bench/db`;
    const common = {
      connections: CONNECTIONS,
      durationMs: SECONDS * 1_000,
      warmupMs: 1_000,
      token: target.token,
    };
    const publishLoad = (url: string) => ({ ...common, mode: 'http' as const, url, body: BODY });
    const sides = [
      { url: `${queueUrl}/v2/publish/${receiver.url}`, pid: gateway.proc.pid, stream },
      { url: `${floor.baseUrl}/v2/publish/${receiver.url}`, pid: floor.proc.pid, stream: floorStream },
    ];
    for (const side of sides)
      await runPublishLoad({ ...publishLoad(side.url), durationMs: WARMUP_SECONDS * 1_000, warmupMs: 0 });
    const [singleRuns, floorSingleRuns] = await alternateRounds(
      ROUNDS,
      sides.map((side) => () => publishRun(publishLoad(side.url), side.pid, inspect!, side.stream)),
    );
    const single = medianRun(singleRuns!);
    const floorSingle = medianRun(floorSingleRuns!);
    const direct = await runPublishLoad({
      ...common,
      mode: 'xadd',
      body: BODY,
      destination: receiver.url,
      redis: { host: redis.host, port: redis.port, password: redis.password, keyPrefix: KEY_PREFIX },
    });
    const batchBody = JSON.stringify(
      Array.from({ length: BATCH }, () => ({
        destination: receiver!.url,
        body: BODY,
        headers: { 'content-type': 'application/json' },
      })),
    );
    const batch = await runPublishLoad({
      ...common,
      connections: 16,
      mode: 'http',
      url: `${queueUrl}/v2/batch`,
      body: batchBody,
      messagesPerRequest: BATCH,
    });
    await gateway.proc.stop();
    await floor.proc.stop();
    gateway = undefined;
    floor = undefined;
    console.log(
      `publishing (closed loop, workers off; single publishes: medians of ${ROUNDS} alternating rounds)`,
    );
    console.log('                                                   msgs/s    p50        p99        CPU/msg');
    for (const [name, r] of [
      [`API single publish, ${CONNECTIONS} connections`, single],
      [`floor single publish, ${CONNECTIONS} connections`, floorSingle],
      [`direct Redis XADD, ${CONNECTIONS} concurrent`, direct],
      [`API batch of ${BATCH}, 16 connections`, batch],
    ] as const) {
      console.log(
        `  ${name.padEnd(47)} ${String(Math.round(r.messagesPerSecond)).padStart(7)}   ${us(r.latencyUs.p50).padEnd(10)} ${us(r.latencyUs.p99).padEnd(10)} ${'cpuUs' in r ? `${round(r.cpuUs)} µs [${r.cpuSpread}]` : ''}${r.errors + r.non2xx > 0 ? `  (${r.errors} errors, ${r.non2xx} non-2xx)` : ''}`,
      );
    }
    console.log(
      `  API / XADD: throughput ${round(single.messagesPerSecond / direct.messagesPerSecond, 2)}, ` +
        `p50 ${round(single.latencyUs.p50 / direct.latencyUs.p50, 2)}x, p99 ${round(single.latencyUs.p99 / direct.latencyUs.p99, 2)}x\n`,
    );

    // 2. Sustained delivery of a backlog: the gateway's, then the floor's.
    await storeBacklog(inspect, stream, receiver.url);
    receiver.reset();
    const gatewayGc = new GcCount();
    gateway = await startGateway(target, true, gatewayGc);
    const delivered = await drain(receiver, gateway.proc.pid);
    await storeBacklog(inspect, floorStream, receiver.url);
    receiver.reset();
    const floorGc = new GcCount();
    floor = await startFloorQueue(
      { ...floorSpec, concurrency: CONCURRENCY },
      { flags: GC_TRACE_FLAGS, onLine: floorGc.onLine },
    );
    const floorDelivered = await drain(receiver, floor.proc.pid);
    console.log(
      `sustained delivery of a ${BACKLOG}-message backlog (signed, to a 2xx): gateway ${Math.round(delivered.perSecond)}/s, ${round(delivered.cpuUs)} µs CPU each; ` +
        `floor ${Math.round(floorDelivered.perSecond)}/s, ${round(floorDelivered.cpuUs)} µs\n`,
    );

    // 3. Publish-to-delivery latency at a fixed offered rate, rounds alternating gateway and floor,
    // after an uncounted warm-up round of each (neither has served a publish at this rate yet).
    const gatewayPublishUrl = `${gateway.baseUrl}/queue/bench/db/v2/publish/${receiver.url}`;
    const floorPublishUrl = `${floor.baseUrl}/v2/publish/${receiver.url}`;
    const latencySides = [
      { url: gatewayPublishUrl, gc: gatewayGc },
      { url: floorPublishUrl, gc: floorGc },
    ];
    for (const { url, gc } of latencySides)
      await latencyRound(receiver, inspect, {
        publishUrl: url,
        token: target.token,
        gc,
        seconds: WARMUP_SECONDS,
      });
    const [gatewayRounds, floorRounds] = await alternateRounds(
      ROUNDS,
      latencySides.map(
        ({ url, gc }) =>
          () =>
            latencyRound(receiver!, inspect!, { publishUrl: url, token: target.token, gc }),
      ),
    );
    const rounds = gatewayRounds!.map((gateway, i) => ({ gateway, floor: floorRounds![i]! }));
    const of = (side: 'gateway' | 'floor', field: 'p50' | 'p99' | 'commands' | keyof Garbage) =>
      rounds.map((r) => r[side][field]);
    console.log(
      `latency at ${OFFERED_RATE}/s offered (open model, ${OFFERED_RATE * SECONDS} messages a round), publish to delivery:`,
    );
    for (const [i, r] of rounds.entries())
      console.log(
        `  round ${i + 1}: gateway p50 ${round(r.gateway.p50, 2)} ms, p99 ${round(r.gateway.p99, 2)} ms; floor p50 ${round(r.floor.p50, 2)} ms, p99 ${round(r.floor.p99, 2)} ms${r.gateway.failed + r.floor.failed > 0 ? ` (${r.gateway.failed}/${r.floor.failed} failed)` : ''}`,
      );
    console.log(
      `Redis commands per message (publish + delivery, script-internal calls included): gateway ${round(median(of('gateway', 'commands')), 2)}, floor ${round(median(of('floor', 'commands')), 2)}`,
    );
    console.log(`  gateway, last round: ${rounds.at(-1)!.gateway.byCommand}`);
    console.log(`  floor, last round: ${rounds.at(-1)!.floor.byCommand}`);
    // Bytes, not time: the load of a shared machine does not move them (bench/queue/gc-count.ts).
    const garbage = (side: 'gateway' | 'floor') =>
      `${side} ${round(median(of(side, 'kb')), 1)} KB [${spread(of(side, 'kb'), 1)}] (${round(median(of(side, 'scavengesPer1k')), 1)} scavenges per 1,000)`;
    console.log(
      `V8 heap allocated per message (publish + delivery): ${garbage('gateway')}, ${garbage('floor')}\n`,
    );

    // 4. Signing.
    const signUs = await signingCostUs(SIGNING_KEY, Buffer.from(BODY));
    console.log(
      `signing (HS256 with node:crypto + SHA-256 of a ${BODY.length}-byte body): ${round(signUs, 1)} µs per message\n`,
    );

    const p50 = median(of('gateway', 'p50'));
    const p99 = median(of('gateway', 'p99'));
    const publishRatio = single.cpuUs / floorSingle.cpuUs;
    const deliveryRatio = delivered.cpuUs / floorDelivered.cpuUs;
    console.log(
      `against the goals (machine load average now ${round(os.loadavg()[0]!, 1)}; medians of ${ROUNDS} rounds, their spread in brackets):`,
    );
    goalLine(
      `latency at ${OFFERED_RATE}/s, p50`,
      `${round(p50, 2)} ms [${spread(of('gateway', 'p50'), 2)}], floor ${round(median(of('floor', 'p50')), 2)}`,
      `≤ ${GOALS.latencyP50Ms} ms`,
      p50 <= GOALS.latencyP50Ms,
    );
    goalLine(
      `latency at ${OFFERED_RATE}/s, p99`,
      `${round(p99, 2)} ms [${spread(of('gateway', 'p99'), 1)}], floor ${round(median(of('floor', 'p99')), 2)}`,
      `≤ ${GOALS.latencyP99Ms} ms`,
      p99 <= GOALS.latencyP99Ms,
    );
    goalLine(
      'CPU per publish, gateway / floor',
      `${round(publishRatio, 2)}x (${round(single.cpuUs)} [${single.cpuSpread}] / ${round(floorSingle.cpuUs)} [${floorSingle.cpuSpread}] µs)`,
      `≤ ${GOALS.cpuToFloor}x`,
      publishRatio <= GOALS.cpuToFloor,
    );
    goalLine(
      'CPU per delivery, gateway / floor',
      `${round(deliveryRatio, 2)}x (${round(delivered.cpuUs)} / ${round(floorDelivered.cpuUs)} µs)`,
      `≤ ${GOALS.cpuToFloor}x`,
      deliveryRatio <= GOALS.cpuToFloor,
    );
    goalLine(
      'single publishes',
      `${Math.round(single.messagesPerSecond)}/s, floor ${Math.round(floorSingle.messagesPerSecond)}, XADD ${Math.round(direct.messagesPerSecond)}`,
      `≥ ${GOALS.singlePublishes}`,
      single.messagesPerSecond >= GOALS.singlePublishes,
    );
    goalLine(
      `publishes in batches of ${BATCH}`,
      `${Math.round(batch.messagesPerSecond)} msg/s, XADD ${Math.round(direct.messagesPerSecond)}`,
      `≥ ${GOALS.batchedPublishes}`,
      batch.messagesPerSecond >= GOALS.batchedPublishes,
    );
    goalLine(
      'signed deliveries from a backlog',
      `${Math.round(delivered.perSecond)}/s, floor ${Math.round(floorDelivered.perSecond)}`,
      `≥ ${GOALS.deliveries}`,
      delivered.perSecond >= GOALS.deliveries,
    );
    // No number is the goal here: each command is there for a guarantee (docs/queue.md, Performance).
    const commands = median(of('gateway', 'commands'));
    console.log(
      `  ${'Redis commands per message (publish + delivery)'.padEnd(52)} ${`${round(commands, 2)}, floor ${round(median(of('floor', 'commands')), 2)}`.padEnd(28)} ${'(each one a guarantee needs; docs/queue.md)'}`,
    );
    console.log(
      `  (load average at the start ${round(loadAtStart, 1)}, at the end ${round(os.loadavg()[0]!, 1)})`,
    );
  } finally {
    await gateway?.proc.stop();
    await floor?.proc.stop();
    inspect?.disconnect();
    await receiver?.close();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
