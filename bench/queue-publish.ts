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
 * Redis persists with AOF everysec; the receiver and everything else are on loopback. The phases
 * are in bench/queue-publish/, the load generators and the floor in bench/queue/.
 *
 *   npx tsx bench/queue-publish.ts            (QUEUE_BENCH_SECONDS=5 per measured phase,
 *                                              QUEUE_BENCH_ROUNDS=3 latency rounds by default)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import type { QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { round } from './lib/stats.js';
import { startCountingReceiver, type CountingReceiver } from './queue/counting-receiver.js';
import { startFloorQueue, type FloorSpec } from './queue/floor-queue.js';
import { GC_TRACE_FLAGS, GcCount } from './queue/gc-count.js';
import { signingCostUs } from './queue/signing-cost.js';
import { drain, storeBacklog, type DrainFigures } from './queue-publish/delivery-drain.js';
import { printGoals } from './queue-publish/goals-summary.js';
import { benchLatency } from './queue-publish/latency-phase.js';
import {
  BACKLOG,
  BODY,
  CONCURRENCY,
  FLOOR_PREFIX,
  KEY_PREFIX,
  ROUNDS,
  SECONDS,
  SIGNING_KEY,
  startGateway,
} from './queue-publish/publish-settings.js';
import { benchPublishing } from './queue-publish/publishing-phase.js';

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
    const publishing = await benchPublishing({
      redis,
      inspect,
      target,
      floorSpec,
      receiverUrl: receiver.url,
    });

    // 2. Sustained delivery of a backlog: the gateway's, then the floor's.
    await inspect.del(stream, floorStream);
    await storeBacklog(inspect, stream, receiver.url, BACKLOG);
    receiver.reset();
    const gatewayGc = new GcCount();
    gateway = await startGateway(target, true, gatewayGc);
    const delivered = await drain(receiver, gateway.proc.pid);
    await storeBacklog(inspect, floorStream, receiver.url, BACKLOG);
    receiver.reset();
    const floorGc = new GcCount();
    floor = await startFloorQueue(
      { ...floorSpec, concurrency: CONCURRENCY },
      { flags: GC_TRACE_FLAGS, onLine: floorGc.onLine },
    );
    const floorDelivered = await drain(receiver, floor.proc.pid);
    // Ran + waited for a CPU near 100%: the rate is the CPU per delivery's, not a wait of the loop's own.
    const loop = ({ mainThread: m }: DrainFigures) =>
      `main thread ran ${round(m.ran * 100)}%, waited for a CPU ${round(m.waitedForCpu * 100)}%, idle ${round(Math.max(0, 1 - m.ran - m.waitedForCpu) * 100)}% of the drain`;
    console.log(
      `sustained delivery of a ${BACKLOG}-message backlog (signed, to a 2xx): gateway ${Math.round(delivered.perSecond)}/s, ${round(delivered.cpuUs)} µs CPU each, ${loop(delivered)}; ` +
        `floor ${Math.round(floorDelivered.perSecond)}/s, ${round(floorDelivered.cpuUs)} µs, ${loop(floorDelivered)}\n`,
    );

    // 3. Publish-to-delivery latency at a fixed offered rate, rounds alternating gateway and floor.
    const latency = await benchLatency({
      receiver,
      inspect,
      token: target.token,
      sides: {
        gateway: {
          url: `${gateway.baseUrl}/queue/bench/db/v2/publish/${receiver.url}`,
          pid: gateway.proc.pid,
          gc: gatewayGc,
        },
        floor: { url: `${floor.baseUrl}/v2/publish/${receiver.url}`, pid: floor.proc.pid, gc: floorGc },
      },
    });

    // 4. Signing.
    const signUs = signingCostUs(SIGNING_KEY, Buffer.from(BODY));
    console.log(
      `signing (HS256 with node:crypto + SHA-256 of a ${BODY.length}-byte body): ${round(signUs, 1)} µs per message\n`,
    );

    printGoals({ publishing, delivered, floorDelivered, latency, loadAtStart });
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
