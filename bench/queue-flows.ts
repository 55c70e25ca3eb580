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
import { startRedis, type RedisServer } from '../local/redis-server.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import {
  startArrivalReceiver as startReceiver,
  type ArrivalReceiver as Receiver,
} from './lib/arrival-receiver.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { benchFanOut } from './queue-flows/fan-out-phase.js';
import { KEY_PREFIX, ROUNDS } from './queue-flows/flows-settings.js';
import { benchQueues } from './queue-flows/queues-phase.js';
import { benchSchedules, SCHEDULES } from './queue-flows/schedules-phase.js';

const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
const ALL_PHASES = ['schedules', 'fan-out', 'queues'] as const;
/** QUEUE_FLOWS_BENCH_ONLY=schedules,queues runs those phases alone. */
const PHASES = new Set<string>(
  process.env.QUEUE_FLOWS_BENCH_ONLY?.split(',').map((p) => p.trim()) ?? ALL_PHASES,
);
/**
 * The schedule claim leases to run phase 1 with, in turn (QUEUE_FLOWS_SCHEDULE_LEASES, ms,
 * comma-separated; default the gateway's 2000): 10000,2000 compares the old 10 s lease, which a
 * round never renews, with the renewed 2 s one, side by side.
 */
const SCHEDULE_CLAIM_LEASES = (process.env.QUEUE_FLOWS_SCHEDULE_LEASES ?? '2000').split(',').map(Number);

function startGateway(target: QueueTarget, env: Record<string, string> = {}): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    bundled: true,
    env: buildQueueGatewayEnv(KEY_PREFIX, { SETTEE_QUEUE_WORKER_CONCURRENCY: '128', ...env }),
  });
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
