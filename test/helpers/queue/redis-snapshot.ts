import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { Redis } from 'ioredis';
import { waitFor } from '../../../local/wait.js';
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
 * Everything a write to the database would change: the key count, each key's type and content, and
 * the stream's last generated id (which moves even if an added entry were deleted again). A key's
 * content is a digest of its members in sorted order, not its MEMORY USAGE nor its reply order: a
 * hashtable being rehashed moves a bucket on every lookup, a read-only HGET too, which reorders its
 * fields and later frees its old table (seen under the workflow fuzz's FUZZ_SEED=13).
 */
export async function snapshotDatabase(redis: Redis): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  // Running delivery workers renew their heartbeats on their own clock: not a request's write.
  const keys = (await redis.keys('*')).filter((key) => !key.endsWith(HEARTBEATS_KEY_SUFFIX)).sort();
  snapshot.dbsize = String(keys.length);
  for (const key of keys) snapshot[key] = await keyState(redis, key);
  return snapshot;
}

async function keyState(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  switch (type) {
    case 'stream': {
      const info = (await redis.call('XINFO', 'STREAM', key)) as unknown[];
      const lastId = info[info.indexOf('last-generated-id') + 1];
      return `stream:${await redis.xlen(key)}:${String(lastId)}`;
    }
    case 'string':
      return `string:${digest([await redis.get(key)])}`;
    case 'hash':
      return `hash:${digest(sortedPairs(await redis.hgetall(key)))}`;
    case 'zset':
      return `zset:${digest(await redis.zrange(key, '0', '-1', 'WITHSCORES'))}`;
    case 'set':
      return `set:${digest((await redis.smembers(key)).sort())}`;
    case 'list':
      return `list:${digest(await redis.lrange(key, 0, -1))}`;
    default:
      // 'none': the key was deleted between KEYS and TYPE, a write still landing (see settledSnapshot).
      return type;
  }
}

const sortedPairs = (hash: Record<string, string>) =>
  Object.keys(hash)
    .sort()
    .flatMap((field) => [field, hash[field]!]);

const digest = (parts: readonly (string | null)[]) =>
  createHash('sha1').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);

/**
 * The database once it has stopped changing: two snapshots in a row the same. A test that compares
 * the database around requests it sends starts from here when writes of earlier work (a delivery's
 * completion after its answer was seen) may still be landing.
 */
export async function settledSnapshot(redis: Redis): Promise<Record<string, string>> {
  let previous = await snapshotDatabase(redis);
  return waitFor(
    'the database to stop changing',
    async () => {
      await delay(SETTLE_INTERVAL_MS);
      const current = await snapshotDatabase(redis);
      const settled = isDeepStrictEqual(current, previous);
      previous = current;
      return settled ? current : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 0 },
  );
}

/** Longer than a delivery's completion takes to land after the destination answered. */
const SETTLE_INTERVAL_MS = 200;
