/**
 * The webhook queue's throughput and latency, end to end on this machine:
 *   1. publishes accepted per second through the API (single and batch) next to direct Redis XADDs
 *      of the same messages, with p50/p99 latency, as ratios (delivery workers off);
 *   2. deliveries per second sustained, from a stored backlog to the receiver's 2xx;
 *   3. publish-to-delivery latency p50/p99 at a fixed offered rate (open model: publishes leave on
 *      schedule whether or not earlier ones have returned), and Redis commands per message;
 *   4. the signing cost per message.
 * Redis persists with AOF everysec; the receiver and everything else are on loopback.
 *
 *   npx tsx bench/queue-publish.ts            (QUEUE_BENCH_SECONDS=5 per measured phase by default)
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { MESSAGE_FIELD, queueKeys } from '../gateway/queue/core/keys.js';
import { encodeMessage } from '../gateway/queue/core/message-codec.js';
import { createMessage } from '../gateway/queue/core/message.js';
import { createDeliverySigner } from '../gateway/queue/workers/signer.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { quantile, round } from './lib/stats.js';
import { startCountingReceiver, type CountingReceiver } from './queue/counting-receiver.js';
import { runPublishLoad } from './queue/publish-load.js';

const KEY_PREFIX = '{bench}:';
const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
const SECONDS = Number(process.env.QUEUE_BENCH_SECONDS ?? '5');
const CONNECTIONS = 64;
const BATCH = 100;
const BACKLOG = 20_000;
const OFFERED_RATE = 1_000;
const BODY = JSON.stringify({ event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' });

function startGateway(target: QueueTarget, workers: boolean): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    workers,
    env: {
      SETTEE_QUEUE_KEY_PREFIX: KEY_PREFIX,
      SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
      SETTEE_QUEUE_WORKER_CONCURRENCY: '128',
      SETTEE_QUEUE_POLL_INTERVAL_MS: '200',
      SETTEE_QUEUE_MAX_BATCH_SIZE: String(BATCH),
      SETTEE_LOG_LEVEL: 'error',
    },
  });
}

async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const [, name, count] of (await redis.info('commandstats')).matchAll(
    /cmdstat_([\w|]+):calls=(\d+)/g,
  )) {
    calls.set(name ?? '', Number(count));
  }
  return calls;
}

function callsBetween(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, count] of after) {
    const diff = count - (before.get(name) ?? 0);
    if (diff > 0 && !/^(info|ping|xinfo|zrangebyscore|config)/.test(name)) delta[name] = diff;
  }
  return delta;
}

async function offerAtFixedRate(
  publishUrl: string,
  token: string,
  rate: number,
  seconds: number,
): Promise<{ sent: number; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const total = rate * seconds;
  const started = performance.timeOrigin + performance.now();
  let failed = 0;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1_000) / rate;
    const wait = due - (performance.timeOrigin + performance.now());
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const body = JSON.stringify({ n: i, sentAt: performance.timeOrigin + performance.now() });
    inFlight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          publishUrl,
          {
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          },
          (res) => {
            if (res.statusCode !== 201) failed += 1;
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', () => {
          failed += 1;
          resolve();
        });
        req.end(body);
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  return { sent: total, failed };
}

async function signingCostUs(): Promise<number> {
  const signer = createDeliverySigner(SIGNING_KEY);
  const body = Buffer.from(BODY);
  for (let i = 0; i < 2_000; i++) await signer.sign({ destination: 'https://a.example/hook', body });
  const count = 20_000;
  const started = performance.now();
  for (let i = 0; i < count; i++) await signer.sign({ destination: 'https://a.example/hook', body });
  return ((performance.now() - started) * 1_000) / count;
}

const us = (value: number): string => `${round(value / 1_000, 2)} ms`;

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-bench-'));
  let redis: RedisServer | undefined;
  let gateway: QueueGatewayProcess | undefined;
  let receiver: CountingReceiver | undefined;
  let inspect: Redis | undefined;
  try {
    // A dataDir turns on the append-only file with appendfsync everysec (local/redis-server.ts).
    redis = await startRedis({ dataDir });
    inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    receiver = await startCountingReceiver({ recordLatency: true });
    const target = testQueueTarget(redis, { namespace: 'bench', signingKey: SIGNING_KEY });
    const stream = queueKeys(KEY_PREFIX).stream;
    console.log(
      `queue benchmark: ${os.cpus().length} CPUs, ${SECONDS} s per phase, Redis ${(await inspect.info('server')).match(/redis_version:(\S+)/)?.[1]} with AOF everysec\n`,
    );

    // 1. Publishing alone.
    gateway = await startGateway(target, false);
    const queueUrl = `${gateway.baseUrl}/queue/bench/db`;
    const common = {
      connections: CONNECTIONS,
      durationMs: SECONDS * 1_000,
      warmupMs: 1_000,
      token: target.token,
    };
    const single = await runPublishLoad({
      ...common,
      mode: 'http',
      url: `${queueUrl}/v2/publish/${receiver.url}`,
      body: BODY,
    });
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
    gateway = undefined;
    console.log('publishing (closed loop, workers off)             msgs/s    p50        p99');
    for (const [name, r] of [
      [`API single publish, ${CONNECTIONS} connections`, single],
      [`direct Redis XADD, ${CONNECTIONS} concurrent`, direct],
      [`API batch of ${BATCH}, 16 connections`, batch],
    ] as const) {
      console.log(
        `  ${name.padEnd(47)} ${String(Math.round(r.messagesPerSecond)).padStart(7)}   ${us(r.latencyUs.p50).padEnd(10)} ${us(r.latencyUs.p99)}${r.errors + r.non2xx > 0 ? `  (${r.errors} errors, ${r.non2xx} non-2xx)` : ''}`,
      );
    }
    console.log(
      `  API / XADD: throughput ${round(single.messagesPerSecond / direct.messagesPerSecond, 2)}, ` +
        `p50 ${round(single.latencyUs.p50 / direct.latencyUs.p50, 2)}x, p99 ${round(single.latencyUs.p99 / direct.latencyUs.p99, 2)}x\n`,
    );

    // 2. Sustained delivery of a backlog.
    await inspect.del(stream);
    const pipeline = inspect.pipeline();
    for (let i = 0; i < BACKLOG; i++) {
      const message = createMessage({
        destination: receiver.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(BODY),
        retries: 3,
      });
      pipeline.xadd(stream, '*', MESSAGE_FIELD, encodeMessage(message));
    }
    await pipeline.exec();
    receiver.reset();
    gateway = await startGateway(target, true);
    await waitFor('the backlog to drain', async () => (receiver!.received >= BACKLOG ? true : undefined), {
      timeoutMs: 300_000,
      intervalMs: 20,
    });
    // The gateway's start-up is left out: the clock runs from its first delivery to its last.
    const drainMs = receiver.lastAt - receiver.firstAt;
    console.log(
      `sustained delivery of a ${BACKLOG}-message backlog: ${Math.round(((BACKLOG - 1) / drainMs) * 1_000)} deliveries/s (signed, to a 2xx)`,
    );

    // 3. Publish-to-delivery latency at a fixed offered rate, and Redis commands per message.
    await waitFor(
      'the stream to empty',
      async () => ((await inspect!.xlen(stream)) === 0 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    receiver.reset();
    const before = await commandCalls(inspect);
    const offered = await offerAtFixedRate(
      `${gateway.baseUrl}/queue/bench/db/v2/publish/${receiver.url}`,
      target.token,
      OFFERED_RATE,
      SECONDS,
    );
    await waitFor(
      'every offered message',
      async () => (receiver!.received >= offered.sent - offered.failed ? true : undefined),
      { timeoutMs: 60_000 },
    );
    const calls = callsBetween(before, await commandCalls(inspect));
    const perMessage = Object.values(calls).reduce((a, b) => a + b, 0) / receiver.received;
    console.log(
      `latency at ${OFFERED_RATE}/s offered (open model, ${offered.sent} messages, ${offered.failed} failed): ` +
        `p50 ${round(quantile(receiver.latenciesMs, 0.5), 2)} ms, p99 ${round(quantile(receiver.latenciesMs, 0.99), 2)} ms publish-to-delivery`,
    );
    console.log(
      `Redis commands per message (publish + delivery, script-internal calls included): ${round(perMessage, 2)} ${JSON.stringify(calls)}`,
    );

    // 4. Signing.
    console.log(
      `signing (HS256 with node:crypto + SHA-256 of a ${BODY.length}-byte body): ${round(await signingCostUs(), 1)} µs per message`,
    );
  } finally {
    await gateway?.proc.stop();
    inspect?.disconnect();
    await receiver?.close();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
