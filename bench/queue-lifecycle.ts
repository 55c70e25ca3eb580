/**
 * The cost of a message's life beyond publish and delivery, on this machine:
 *   1. publish and delivery throughput with events recorded against the same runs with recording
 *      switched off (SETTEE_QUEUE_RECORD_EVENTS), alternated and repeated: ratios, median and spread;
 *   2. 100,000 delayed messages due in the same second: time from the due second until the last
 *      is delivered, and Redis and gateway memory per pending message;
 *   3. GET /v2/events and GET /v2/dlq latency, p50/p99 per page, with 1,000,000 events and
 *      100,000 dead letters stored (seeded straight into Redis in their stored form).
 *
 *   npx tsx bench/queue-lifecycle.ts   (LIFECYCLE_BENCH_SECONDS=3 per throughput run,
 *                                       LIFECYCLE_BENCH_ROUNDS=3 rounds of on/off,
 *                                       LIFECYCLE_BENCH_PARTS=1,2,3 which parts to run)
 */
import fs from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { buildDeadLetter } from '../gateway/queue/core/dead-letter.js';
import { EVENT_FIELD, queueKeys } from '../gateway/queue/core/keys.js';
import { createMessage, type QueueMessage } from '../gateway/queue/core/message.js';
import { eventJson } from '../gateway/queue/core/message-event.js';
import { MessageStore } from '../gateway/queue/stores/message-store.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { median, quantile, round, spread } from './lib/stats.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { startCountingReceiver, type CountingReceiver } from './queue/counting-receiver.js';
import { runPublishLoad } from './queue/publish-load.js';

const KEY_PREFIX = '{bench}:';
const SECONDS = Number(process.env.LIFECYCLE_BENCH_SECONDS ?? '3');
const ROUNDS = Number(process.env.LIFECYCLE_BENCH_ROUNDS ?? '3');
const PARTS = new Set((process.env.LIFECYCLE_BENCH_PARTS ?? '1,2,3').split(',').map((p) => p.trim()));
const BACKLOG = 10_000;
const DELAYED = 100_000;
const EVENTS = 1_000_000;
const DEAD_LETTERS = 100_000;
const PAGE_REQUESTS = 200;
const BODY = JSON.stringify({ event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' });

function startGateway(target: QueueTarget, options: { workers: boolean; events: boolean }) {
  return spawnQueueGateway({
    targets: [target],
    bundled: true,
    workers: options.workers,
    env: buildQueueGatewayEnv(KEY_PREFIX, {
      SETTEE_QUEUE_WORKER_CONCURRENCY: '128',
      SETTEE_QUEUE_RECORD_EVENTS: String(options.events),
    }),
  });
}

function message(destination: string, overrides: Partial<QueueMessage> = {}): QueueMessage {
  return {
    ...createMessage({
      destination,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(BODY),
      retries: 3,
    }),
    ...overrides,
  };
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number((await redis.info('memory')).match(/used_memory:(\d+)/)?.[1] ?? 0);
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime (fields 14 and 15) are in clock ticks, USER_HZ, which is 100 on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds the Redis server has used so far. */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(info.match(new RegExp(`${name}:([\\d.]+)`))?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/VmRSS:\s+(\d+) kB/)?.[1] ?? 0) * 1024;
}

interface RoundResult {
  publish: number;
  deliver: number;
  /**
   * CPU µs per message of the gateway and of Redis while publishing and while delivering: on a
   * machine shared with other work the rates swing with the load, while the CPU each message
   * costs holds steady, so this is what the events cost is read from there.
   */
  publishCpu: { gateway: number; redis: number };
  deliverCpu: { gateway: number; redis: number };
}

/** Publishes/s through the API, and deliveries/s of a stored backlog, with events on or off. */
async function throughputRound(
  redis: RedisServer,
  inspect: Redis,
  receiver: CountingReceiver,
  target: QueueTarget,
  events: boolean,
): Promise<RoundResult> {
  await inspect.flushdb();
  let gateway: QueueGatewayProcess | undefined = await startGateway(target, { workers: false, events });
  try {
    const publishCpu = { gateway: cpuSeconds(gateway.proc.pid), redis: await redisCpuSeconds(inspect) };
    const load = await runPublishLoad({
      mode: 'http',
      connections: 64,
      durationMs: SECONDS * 1_000,
      warmupMs: 500,
      token: target.token,
      url: `${gateway.baseUrl}/queue/ns/db/v2/publish/${receiver.url}`,
      body: BODY,
    });
    const published = load.messagesPerSecond * SECONDS;
    const publishCpuPerMessage = {
      gateway: ((cpuSeconds(gateway.proc.pid) - publishCpu.gateway) / published) * 1e6,
      redis: (((await redisCpuSeconds(inspect)) - publishCpu.redis) / published) * 1e6,
    };
    await gateway.proc.stop();
    gateway = undefined;
    await inspect.flushdb();
    const store = new MessageStore(inspect, queueKeys(KEY_PREFIX), events ? target.limits.maxEvents : 0);
    for (let i = 0; i < BACKLOG; i += 500)
      await store.enqueue(Array.from({ length: 500 }, () => message(receiver.url)));
    receiver.reset();
    gateway = await startGateway(target, { workers: true, events });
    const deliverCpu = { gateway: cpuSeconds(gateway.proc.pid), redis: await redisCpuSeconds(inspect) };
    await waitFor('the backlog', async () => (receiver.received >= BACKLOG ? true : undefined), {
      timeoutMs: 300_000,
      intervalMs: 10,
    });
    return {
      publish: load.messagesPerSecond,
      deliver: ((BACKLOG - 1) / (receiver.lastAt - receiver.firstAt)) * 1_000,
      publishCpu: publishCpuPerMessage,
      deliverCpu: {
        gateway: ((cpuSeconds(gateway.proc.pid) - deliverCpu.gateway) / BACKLOG) * 1e6,
        redis: (((await redisCpuSeconds(inspect)) - deliverCpu.redis) / BACKLOG) * 1e6,
      },
    };
  } finally {
    await gateway?.proc.stop();
  }
}

async function eventsOnOff(
  redis: RedisServer,
  inspect: Redis,
  receiver: CountingReceiver,
  target: QueueTarget,
) {
  const ratios = { publish: [] as number[], deliver: [] as number[] };
  const absolute = { on: [] as RoundResult[], off: [] as RoundResult[] };
  for (let round_ = 0; round_ < ROUNDS; round_ += 1) {
    // Alternate which goes first, so drift on a shared machine does not favour one side.
    const order = round_ % 2 === 0 ? [true, false] : [false, true];
    const results = new Map<boolean, RoundResult>();
    for (const events of order)
      results.set(events, await throughputRound(redis, inspect, receiver, target, events));
    const on = results.get(true)!;
    const off = results.get(false)!;
    absolute.on.push(on);
    absolute.off.push(off);
    ratios.publish.push(on.publish / off.publish);
    ratios.deliver.push(on.deliver / off.deliver);
  }
  console.log(
    `1. events recorded vs off (${ROUNDS} rounds, ${SECONDS} s publish runs, ${BACKLOG}-message backlogs)`,
  );
  for (const kind of ['publish', 'deliver'] as const) {
    console.log(
      `   ${kind.padEnd(8)} on ${Math.round(median(absolute.on.map((r) => r[kind])))}/s, off ${Math.round(median(absolute.off.map((r) => r[kind])))}/s; ` +
        `ratio median ${round(median(ratios[kind]), 2)} (spread ${spread(ratios[kind], 2)})`,
    );
  }
  for (const [kind, cpuOf] of [
    ['publish', (r: RoundResult) => r.publishCpu],
    ['deliver', (r: RoundResult) => r.deliverCpu],
  ] as const) {
    const gatewayOn = absolute.on.map((r) => cpuOf(r).gateway);
    const gatewayOff = absolute.off.map((r) => cpuOf(r).gateway);
    const redisOn = absolute.on.map((r) => cpuOf(r).redis);
    const redisOff = absolute.off.map((r) => cpuOf(r).redis);
    const perRound = absolute.on.map(
      (r, i) =>
        (cpuOf(absolute.off[i]!).gateway + cpuOf(absolute.off[i]!).redis) /
        (cpuOf(r).gateway + cpuOf(r).redis),
    );
    console.log(
      `   ${kind.padEnd(8)} CPU µs per message, gateway + Redis: on ${round(median(gatewayOn), 0)} + ${round(median(redisOn), 0)}, ` +
        `off ${round(median(gatewayOff), 0)} + ${round(median(redisOff), 0)}; ` +
        `throughput ratio this implies when CPU-bound (off/on CPU) median ${round(median(perRound), 2)} (spread ${spread(perRound, 2)})`,
    );
  }
}

async function delayedBurst(inspect: Redis, receiver: CountingReceiver, target: QueueTarget) {
  await inspect.flushdb();
  const gateway = await startGateway(target, { workers: true, events: true });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const redisBefore = await usedMemory(inspect);
    const rssBefore = rssBytes(gateway.proc.pid);
    const store = new MessageStore(inspect, queueKeys(KEY_PREFIX), 0);
    const dueAt = Math.ceil((Date.now() + 30_000) / 1_000) * 1_000;
    const seedStarted = Date.now();
    for (let i = 0; i < DELAYED; i += 1_000)
      await store.enqueue(
        Array.from({ length: 1_000 }, () => message(receiver.url, { notBefore: dueAt + 500 })),
      );
    const seedMs = Date.now() - seedStarted;
    if (Date.now() > dueAt) throw new Error(`seeding took ${seedMs} ms, past the due time`);
    const redisPerMessage = (await usedMemory(inspect)) - redisBefore;
    const rssAfterSeed = rssBytes(gateway.proc.pid);
    receiver.reset();
    await waitFor('every delayed message', async () => (receiver.received >= DELAYED ? true : undefined), {
      timeoutMs: 600_000,
      intervalMs: 20,
    });
    console.log(
      `2. ${DELAYED} delayed messages due in the same second: first delivered ${Math.round(receiver.firstAt - (dueAt + 500))} ms after the due time, ` +
        `all ${round((receiver.lastAt - (dueAt + 500)) / 1_000, 1)} s after it (${Math.round(DELAYED / ((receiver.lastAt - receiver.firstAt) / 1_000))} deliveries/s); ` +
        `Redis ${Math.round(redisPerMessage / DELAYED)} bytes per pending message (${BODY.length}-byte body), ` +
        `gateway RSS ${round((rssAfterSeed - rssBefore) / DELAYED, 1)} bytes per pending message (it holds none)`,
    );
  } finally {
    await gateway.proc.stop();
  }
}

async function seedEvents(inspect: Redis, count: number): Promise<void> {
  const events = queueKeys(KEY_PREFIX).events;
  const start = Date.now() - count;
  for (let i = 0; i < count; i += 10_000) {
    const pipeline = inspect.pipeline();
    for (let j = i; j < Math.min(i + 10_000, count); j += 1) {
      const time = start + j;
      // Events as the queue writes them: the message's fields (headers, body) on each.
      const json = eventJson(
        message(`https://a.example/${j % 100}`, {
          id: `msg_bench${j}`,
          label: j % 100 === 0 ? 'rare' : 'common',
        }),
        'DELIVERED',
        time,
        { responseStatus: 200 },
      );
      pipeline.xadd(events, `${time}-0`, EVENT_FIELD, json);
    }
    await pipeline.exec();
  }
}

async function seedDeadLetters(inspect: Redis, count: number): Promise<void> {
  const keys = queueKeys(KEY_PREFIX);
  const start = Date.now() - count;
  for (let i = 0; i < count; i += 10_000) {
    const pipeline = inspect.pipeline();
    for (let j = i; j < Math.min(i + 10_000, count); j += 1) {
      const letter = buildDeadLetter({
        message: message(`https://a.example/${j % 100}`, { label: j % 100 === 0 ? 'rare' : 'common' }),
        reason: 'retries-exhausted',
        failedAt: start + j,
        lastStatus: 500,
        lastResponseBody: 'boom',
      });
      pipeline.hset(keys.deadLetters, letter.dlqId, JSON.stringify(letter));
      pipeline.zadd(keys.deadLetterOrder, 0, letter.dlqId);
    }
    await pipeline.exec();
  }
}

async function pageLatencies(
  url: string,
  token: string,
  withCursor: boolean,
): Promise<{ latencies: number[]; items: number }> {
  const latencies: number[] = [];
  let items = 0;
  let cursor: string | undefined;
  for (let i = 0; i < PAGE_REQUESTS; i += 1) {
    const started = performance.now();
    const response = await fetch(`${url}${withCursor && cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await response.json()) as { cursor?: string; events?: unknown[]; messages?: unknown[] };
    latencies.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
    items += (body.events ?? body.messages ?? []).length;
    cursor = body.cursor;
  }
  return { latencies, items };
}

async function listLatencies(inspect: Redis, target: QueueTarget) {
  await inspect.flushdb();
  const seedStarted = Date.now();
  await seedEvents(inspect, EVENTS);
  await seedDeadLetters(inspect, DEAD_LETTERS);
  const seeded = `${EVENTS} events and ${DEAD_LETTERS} dead letters seeded in ${round((Date.now() - seedStarted) / 1_000, 1)} s, Redis ${round((await usedMemory(inspect)) / 1_048_576)} MiB`;
  // Retention off the path: the seeded items are recent, and the gateway records nothing here.
  const gateway = await startGateway(
    { ...target, limits: { ...target.limits, maxEvents: EVENTS * 2 } },
    { workers: false, events: false },
  );
  try {
    const base = `${gateway.baseUrl}/queue/ns/db/v2`;
    console.log(`3. list pages (${PAGE_REQUESTS} requests each; ${seeded})`);
    for (const [name, url, withCursor] of [
      ['GET /v2/events, first page of 100', `${base}/events?count=100`, false],
      ['GET /v2/events, pages of 100 along the cursor', `${base}/events?count=100`, true],
      ['GET /v2/events?label=rare (1 in 100), 100 per page', `${base}/events?count=100&label=rare`, true],
      ['GET /v2/dlq, first page of 100', `${base}/dlq?count=100`, false],
      ['GET /v2/dlq, pages of 100 along the cursor', `${base}/dlq?count=100`, true],
      ['GET /v2/dlq?label=rare (1 in 100), 100 per page', `${base}/dlq?count=100&label=rare`, true],
    ] as const) {
      const { latencies, items } = await pageLatencies(url, target.token, withCursor);
      console.log(
        `   ${name.padEnd(52)} p50 ${round(quantile(latencies, 0.5), 1)} ms, p99 ${round(quantile(latencies, 0.99), 1)} ms, ${round(items / PAGE_REQUESTS, 1)} items per page`,
      );
    }
  } finally {
    await gateway.proc.stop();
  }
}

async function main(): Promise<void> {
  let redis: RedisServer | undefined;
  let inspect: Redis | undefined;
  let receiver: CountingReceiver | undefined;
  try {
    redis = await startRedis();
    inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    receiver = await startCountingReceiver();
    const target = testQueueTarget(redis, { namespace: 'ns', name: 'db' });
    console.log(
      `queue lifecycle benchmark: ${os.cpus().length} CPUs, Redis ${(await inspect.info('server')).match(/redis_version:(\S+)/)?.[1]} (no persistence)\n`,
    );
    if (PARTS.has('1')) await eventsOnOff(redis, inspect, receiver, target);
    if (PARTS.has('2')) await delayedBurst(inspect, receiver, target);
    if (PARTS.has('3')) await listLatencies(inspect, target);
  } finally {
    inspect?.disconnect();
    await receiver?.close();
    await redis?.stop();
  }
}

await main();
