/**
 * The set-up bench/queue-delivery-rate.ts and bench/queue-delivery-garbage.ts share: a Redis, a
 * loopback receiver that counts deliveries, the bench's queue binding on that Redis, and the
 * environment a bundled gateway with workers starts with (the sizes of bench/queue-publish.ts).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { QueueTarget } from '../../gateway/queue/core/binding-registry.js';
import { startRedis, type RedisServer } from '../../local/redis-server.js';
import { testQueueTarget } from '../../test/helpers/queue/test-queue-target.js';
import { buildQueueGatewayEnv } from '../lib/gateway-bench-env.js';
import { startCountingReceiver, type CountingReceiver } from '../queue/counting-receiver.js';
import { BATCH, CONCURRENCY, KEY_PREFIX, SIGNING_KEY } from './publish-settings.js';

export interface DrainBench {
  readonly server: RedisServer;
  /** The bench's own connection, to store backlogs and read Redis's figures. */
  readonly redis: Redis;
  readonly receiver: CountingReceiver;
  readonly target: QueueTarget;
  /** For a gateway process (queue-gateway-process.ts) with workers, serving `target`. */
  readonly env: NodeJS.ProcessEnv;
  /** Closes the connection and the receiver, stops Redis and removes its data. */
  close(): Promise<void>;
}

/**
 * `appendOnly`: Redis keeps its data in a folder of its own with the append-only file on
 * (appendfsync everysec), as bench/queue-publish.ts runs it; without, no persistence at all.
 */
export async function startDrainBench(options: { appendOnly: boolean }): Promise<DrainBench> {
  const dataDir = options.appendOnly
    ? await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-queue-drain-'))
    : undefined;
  const server = await startRedis(dataDir ? { dataDir } : {});
  const redis = new Redis({ host: server.host, port: server.port, password: server.password, protocol: 2 });
  const receiver = await startCountingReceiver();
  const target = testQueueTarget(server, { namespace: 'bench', signingKey: SIGNING_KEY });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...buildQueueGatewayEnv(KEY_PREFIX, {
      SETTEE_QUEUE_WORKER_CONCURRENCY: String(CONCURRENCY),
      SETTEE_QUEUE_POLL_INTERVAL_MS: '200',
      SETTEE_QUEUE_MAX_BATCH_SIZE: String(BATCH),
    }),
    SETTEE_TEST_QUEUE_TARGETS: JSON.stringify([target]),
    SETTEE_TEST_QUEUE_WORKERS: 'true',
  };
  return {
    server,
    redis,
    receiver,
    target,
    env,
    async close() {
      redis.disconnect();
      await receiver.close();
      await server.stop();
      if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
