import { Redis } from 'ioredis';
import type { RedisServer } from '../../../local/redis-server.js';
import { createDatabaseClient } from '../../../gateway/queue/stores/database-connections.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { testQueueTarget } from './test-queue-target.js';

const HEARTBEATS_KEY_SUFFIX = queueKeys('').consumerHeartbeats;

/** The longest BLOCK time of a test's reads on a blocking connection. */
const TEST_MAX_BLOCK_MS = 1_000;

/** A connection set up exactly as the gateway sets up its own (auto-pipelined, or blocking). */
export function connectAsGateway(server: RedisServer, options: { blocking: boolean; db?: number }): Redis {
  return createDatabaseClient(
    testQueueTarget(server, { namespace: 'test', name: 'redis', db: options.db, signingKey: 'unused' }),
    options.blocking ? { blocking: true, blockMs: TEST_MAX_BLOCK_MS } : { blocking: false },
  );
}

/** A plain connection for a test's own inspection of the database. */
export function connectTestRedis(server: RedisServer, db = 0): Redis {
  return new Redis({
    host: server.host,
    port: server.port,
    password: server.password,
    db,
    protocol: 2,
    lazyConnect: false,
  });
}

/**
 * Everything a write to the database would change: the key count, each key's type and size, and
 * the stream's last generated id (which moves even if an added entry were deleted again).
 */
export async function snapshotDatabase(redis: Redis): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  // Running delivery workers renew their heartbeats on their own clock: not a request's write.
  const keys = (await redis.keys('*')).filter((key) => !key.endsWith(HEARTBEATS_KEY_SUFFIX)).sort();
  snapshot.dbsize = String(keys.length);
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'stream') {
      const info = (await redis.call('XINFO', 'STREAM', key)) as unknown[];
      const lastId = info[info.indexOf('last-generated-id') + 1];
      snapshot[key] = `stream:${await redis.xlen(key)}:${String(lastId)}`;
    } else {
      snapshot[key] = `${type}:${await redis.memory('USAGE', key)}`;
    }
  }
  return snapshot;
}
