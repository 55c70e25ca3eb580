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
 *      publishes with Upstash-Flow-Control-Key of parallelism 1, 10 and 100, against plain
 *      publishes to the same receiver (ratio), with a receiver that answers in 1 ms and in 50 ms,
 *      two replicas, and each message's time from its request to its delivery (p50, p99).
 * Each phase is repeated (QUEUE_FLOWS_BENCH_ROUNDS, default 3); medians with the spread (min-max).
 * QUEUE_FLOWS_BENCH_ONLY=queues runs phase 3 alone.
 * Redis persists with AOF everysec; everything is on loopback.
 *
 *   npx tsx bench/queue-flows.ts
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createSilentLogger } from '../observability/logger.js';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/binding-registry.js';
import { queueKeys } from '../gateway/queue/keys.js';
import { ScheduleTicker } from '../gateway/queue/schedules/schedule-ticker.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { median, quantile, round } from './lib/stats.js';

const KEY_PREFIX = '{bench}:';
const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
const ROUNDS = Number(process.env.QUEUE_FLOWS_BENCH_ROUNDS ?? '3');
/** QUEUE_FLOWS_BENCH_ONLY=queues runs phase 3 alone. */
const ONLY_QUEUES = process.env.QUEUE_FLOWS_BENCH_ONLY === 'queues';
const SCHEDULES = 10_000;
const ENDPOINTS = 100;
const keys = queueKeys(KEY_PREFIX);

interface Receiver {
  url: string;
  /** How long each answer waits. */
  delayMs: number;
  /** Arrival time (epoch ms) of each delivery, by path. */
  arrivals: { path: string; at: number; scheduleId: string | undefined; messageId: string }[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', delayMs: 0, arrivals: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      receiver.arrivals.push({
        path: req.url ?? '',
        at: Date.now(),
        scheduleId: req.headers['upstash-schedule-id'] as string | undefined,
        messageId: String(req.headers['upstash-message-id']),
      });
      const answer = () => res.writeHead(200, { 'content-length': '0' }).end();
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

function startGateway(target: QueueTarget): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    env: {
      SETTEE_QUEUE_KEY_PREFIX: KEY_PREFIX,
      SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
      SETTEE_QUEUE_WORKER_CONCURRENCY: '128',
      SETTEE_LOG_LEVEL: 'error',
    },
  });
}

async function totalCalls(redis: Redis): Promise<number> {
  let total = 0;
  for (const [, name, count] of (await redis.info('commandstats')).matchAll(/cmdstat_([\w|]+):calls=(\d+)/g))
    if (!/^(info|ping|config)/.test(name ?? '')) total += Number(count);
  return total;
}

async function api(base: string, token: string, route: string, init: RequestInit): Promise<Response> {
  const response = await fetch(`${base}${route}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return response;
}

/** Creates SCHEDULES schedules through the API (20 at a time); returns their ids. */
async function createSchedules(base: string, token: string, receiver: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SCHEDULES; i += 20) {
    const created = await Promise.all(
      Array.from({ length: Math.min(20, SCHEDULES - i) }, (_, j) =>
        api(base, token, `/v2/schedules/${receiver}/s/${i + j}`, {
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
        const response = await api(bases[i % bases.length]!, token, route(i), {
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
];

/**
 * 3. Queues and flow-control keys of parallelism 1, 10 and 100 against plain publishes, receivers
 * at 1 ms and 50 ms.
 */
async function benchQueues(bases: readonly string[], token: string, receiver: Receiver): Promise<void> {
  const kinds = SEND_KINDS.map((kind) => kind.name);
  for (const [i, parallelism] of PARALLELISMS.entries())
    await api(bases[0]!, token, '/v2/queues', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queueName: `q${i}`, parallelism }),
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
    console.log('  kind            messages/s          / publish   request to delivery p50 ms    p99 ms');
    for (const kind of kinds)
      console.log(
        `  ${kind.padEnd(14)}  ${spread(rate.get(kind)!).padEnd(18)}  ${String(round(median(rate.get(kind)!) / plain, 3)).padEnd(10)}  ${spread(p50.get(kind)!).padEnd(28)}  ${spread(p99.get(kind)!)}`,
      );
    console.log('');
  }
  receiver.delayMs = 0;
}

const spread = (values: number[], digits = 0) =>
  `${round(median(values), digits)} (${round(Math.min(...values), digits)}-${round(Math.max(...values), digits)})`;

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
    gateways.push(await startGateway(target), await startGateway(target));
    if (ONLY_QUEUES) {
      await benchQueues(
        gateways.map((g) => `${g.baseUrl}/queue/bench/db`),
        target.token,
        receiver,
      );
      return;
    }
    const base = `${gateways[0]!.baseUrl}/queue/bench/db`;
    const ids = await createSchedules(base, target.token, receiver.url);

    // 1a. 10,000 ticks at one instant, two replicas, delivered.
    const lateP50: number[] = [];
    const lateP99: number[] = [];
    const lateLast: number[] = [];
    const perTickEndToEnd: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      receiver.arrivals = [];
      const tickAt = Date.now() + 2_000;
      const before = await totalCalls(inspect);
      await setTicks(inspect, ids, tickAt);
      await waitFor(
        'every tick delivered',
        async () => (receiver!.arrivals.length >= SCHEDULES ? true : undefined),
        {
          timeoutMs: 120_000,
          intervalMs: 10,
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const perSchedule = new Map<string, number>();
      for (const a of receiver.arrivals)
        perSchedule.set(a.scheduleId ?? '', (perSchedule.get(a.scheduleId ?? '') ?? 0) + 1);
      if (receiver.arrivals.length !== SCHEDULES || perSchedule.size !== SCHEDULES)
        throw new Error(
          `round ${round}: ${receiver.arrivals.length} deliveries for ${perSchedule.size} schedules`,
        );
      const late = receiver.arrivals.map((a) => a.at - tickAt);
      lateP50.push(quantile(late, 0.5));
      lateP99.push(quantile(late, 0.99));
      lateLast.push(Math.max(...late));
      perTickEndToEnd.push(((await totalCalls(inspect)) - before - SCHEDULES) / SCHEDULES);
    }
    await Promise.all(gateways.map((g) => g.proc.stop()));
    gateways.length = 0;

    // 1b. One ticker alone: firing time and Redis commands per tick, deliveries off.
    const fireMs: number[] = [];
    const perTick: number[] = [];
    const ticker = new ScheduleTicker({
      redis: inspect,
      keys,
      pollIntervalMs: 1_000,
      logger: createSilentLogger(),
    });
    for (let round = 0; round < ROUNDS; round += 1) {
      await inspect.del(keys.stream);
      await setTicks(inspect, ids, Date.now() - 1);
      const before = await totalCalls(inspect);
      const started = performance.now();
      const fired = await ticker.fireDue();
      fireMs.push(performance.now() - started);
      if (fired !== SCHEDULES) throw new Error(`fired ${fired} of ${SCHEDULES}`);
      perTick.push(((await totalCalls(inspect)) - before) / SCHEDULES);
    }
    await inspect.del(keys.stream);

    console.log(
      `${SCHEDULES} schedules ticking at the same instant        median (min-max) over ${ROUNDS} rounds`,
    );
    console.log(`  two replicas, delivered: lateness p50 ms          ${spread(lateP50)}`);
    console.log(`                           lateness p99 ms          ${spread(lateP99)}`);
    console.log(`                           last tick delivered ms   ${spread(lateLast)}`);
    console.log(
      `                           Redis commands per tick  ${spread(perTickEndToEnd, 1)} (fire and deliver, both replicas)`,
    );
    console.log(`  one ticker, no delivery: firing all ticks ms      ${spread(fireMs)}`);
    console.log(`                           Redis commands per tick  ${spread(perTick, 2)}\n`);

    // 2. Fan-out to a 100-endpoint group against a batch of the same 100 messages.
    await inspect.del(keys.schedules, keys.scheduleMessages, keys.scheduleTicks, keys.scheduleLastTicks);
    gateways.push(await startGateway(target));
    const gatewayBase = `${gateways[0]!.baseUrl}/queue/bench/db`;
    const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({ url: `${receiver!.url}/fan/${i}` }));
    await api(gatewayBase, target.token, '/v2/topics/fan/endpoints', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ endpoints }),
    });
    const batchBody = JSON.stringify(endpoints.map((e) => ({ destination: e.url, body: '{"n":1}' })));
    const groupMs: number[] = [];
    const batchMs: number[] = [];
    const timeToLast = async (send: () => Promise<Response>): Promise<number> => {
      receiver!.arrivals = [];
      const started = Date.now();
      await send();
      await waitFor(
        'every endpoint',
        async () => (receiver!.arrivals.length >= ENDPOINTS ? true : undefined),
        {
          timeoutMs: 30_000,
          intervalMs: 1,
        },
      );
      return Math.max(...receiver!.arrivals.map((a) => a.at)) - started;
    };
    for (let round = 0; round < ROUNDS * 3; round += 1) {
      groupMs.push(
        await timeToLast(() =>
          api(gatewayBase, target.token, '/v2/publish/fan', { method: 'POST', body: '{"n":1}' }),
        ),
      );
      batchMs.push(
        await timeToLast(() =>
          api(gatewayBase, target.token, '/v2/batch', {
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
    console.log(`  publish to the URL group ms                        ${spread(groupMs)}`);
    console.log(`  batch of the same ${ENDPOINTS} messages ms                  ${spread(batchMs)}`);
    console.log(
      `  group / batch                                      ${round(median(groupMs) / median(batchMs), 2)}`,
    );
    console.log('');

    // 3. Queues and flow control: parallelism 1, 10 and 100 against plain publishes, two replicas.
    gateways.push(await startGateway(target));
    await benchQueues(
      gateways.map((g) => `${g.baseUrl}/queue/bench/db`),
      target.token,
      receiver,
    );
  } finally {
    await Promise.all(gateways.map((g) => g.proc.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
