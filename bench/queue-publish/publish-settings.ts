/** bench/queue-publish.ts's settings: the load each phase offers, its goals, and the gateway it starts. */
import type { QueueTarget } from '../../gateway/queue/core/binding-registry.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../test/helpers/queue/spawn-queue-gateway.js';
import { buildQueueGatewayEnv } from '../lib/gateway-bench-env.js';
import type { GcCount } from '../queue/gc-count.js';
import { GC_TRACE_FLAGS } from '../queue/gc-count.js';

export const KEY_PREFIX = '{bench}:';
export const FLOOR_PREFIX = '{floor}:';
export const SIGNING_KEY = 'sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r';
export const SECONDS = Number(process.env.QUEUE_BENCH_SECONDS ?? '5');
export const ROUNDS = Number(process.env.QUEUE_BENCH_ROUNDS ?? '3');
/** Uncounted load each side gets before its first measured round (the JIT's warm-up). */
export const WARMUP_SECONDS = 1;
export const CONNECTIONS = 64;
export const BATCH = 100;
export const BACKLOG = 20_000;
export const OFFERED_RATE = 1_000;
export const CONCURRENCY = 128;
export const BODY = JSON.stringify({ event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' });

/** Issue 26's goals for this bench. */
export const GOALS = {
  latencyP50Ms: 2,
  latencyP99Ms: 10,
  cpuToFloor: 1.5,
  singlePublishes: 30_000,
  batchedPublishes: 100_000,
  deliveries: 15_000,
};

/** The gateway under measurement, from its bundle; `gc` counts its garbage. */
export function startGateway(
  target: QueueTarget,
  workers: boolean,
  gc?: GcCount,
): Promise<QueueGatewayProcess> {
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
