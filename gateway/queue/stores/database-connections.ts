import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'winston';
import type { QueueTarget } from '../core/binding-registry.js';

/** Commands fail after this long rather than hang a publish; blocking reads use their own connection. */
const COMMAND_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * Redis answers a blocking read when its BLOCK time runs out; a reply this much later is taken as
 * lost on a dead connection. A half-open connection (the server or a NAT entry gone without a
 * reset) reports no error at all, so without this a worker's read would wait forever.
 */
const BLOCKING_REPLY_GRACE_MS = 1_000;

/** The shared command connection, or a worker's own for blocking reads of at most `blockMs`. */
export type DatabaseClientRole = { blocking: false } | { blocking: true; blockMs: number };

/** Identifies the database a target points at, so a password or address change gets a new connection. */
export function connectionFingerprint(target: QueueTarget): string {
  const { host, port, tls, db } = target.connection;
  const password = createHash('sha256').update(target.token).digest('hex');
  return `${host}:${port}:${tls ? 'tls' : 'plain'}:${db}:${password}`;
}

export function createDatabaseClient(target: QueueTarget, role: DatabaseClientRole): Redis {
  const { host, port, tls, db } = target.connection;
  return new Redis({
    host,
    port,
    db,
    password: target.token,
    tls: tls ? { servername: host } : undefined,
    // RESP2 keeps reply shapes identical on every Redis 6.2+ and Valkey.
    protocol: 2,
    connectTimeout: CONNECT_TIMEOUT_MS,
    lazyConnect: false,
    ...(role.blocking
      ? blockingReadOptions(role.blockMs)
      : { commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 2, enableAutoPipelining: true }),
  });
}

/**
 * A blocking read on a dead connection settles as an empty read (ioredis' blockingTimeout: BLOCK
 * time plus the grace), and a connection that sent nothing for longer than any read may block is
 * destroyed and opened anew (socketTimeout), so the worker's next read goes to a live one.
 */
function blockingReadOptions(blockMs: number): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    enableAutoPipelining: false,
    // The grace is added to each read's own BLOCK time; this covers a read queued while offline.
    blockingTimeout: blockMs + BLOCKING_REPLY_GRACE_MS,
    blockingTimeoutGrace: BLOCKING_REPLY_GRACE_MS,
    socketTimeout: blockMs + 2 * BLOCKING_REPLY_GRACE_MS,
    // A read already settled as empty must not be sent again after the reconnect: Redis would hand
    // it entries that nobody reads (they would wait for reclaimIdleMs).
    autoResendUnfulfilledCommands: false,
  };
}

/**
 * QUIT lets replies in flight arrive; a client that is not connected would instead queue the QUIT
 * and wait for a reconnect that may never come, so it is simply dropped.
 */
export async function closeClient(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') return redis.disconnect();
  await redis.quit().catch(() => redis.disconnect());
}

/**
 * One shared command connection per binding database, for publishes and the workers' writes.
 * ioredis pipelines concurrent commands on it automatically.
 */
export class DatabaseConnections {
  private readonly clients = new Map<string, { target: QueueTarget; fingerprint: string; redis: Redis }>();

  constructor(private readonly logger: Logger) {}

  get(target: QueueTarget): Redis {
    const current = this.clients.get(target.key);
    // The registry's targets are frozen, so the same object means the same database; this skips
    // hashing the password on every publish.
    if (current?.target === target) return current.redis;
    const fingerprint = connectionFingerprint(target);
    if (current?.fingerprint === fingerprint) {
      current.target = target;
      return current.redis;
    }
    if (current) void closeClient(current.redis);
    const redis = createDatabaseClient(target, { blocking: false });
    // Without a listener ioredis prints every reconnect failure to stderr; log it once per change.
    let lastError = '';
    redis.on('error', (err: Error) => {
      if (err.message === lastError) return;
      lastError = err.message;
      this.logger.warn('queue database connection failed', { binding: target.key, error: err.message });
    });
    redis.on('ready', () => (lastError = ''));
    this.clients.set(target.key, { target, fingerprint, redis });
    return redis;
  }

  async release(key: string): Promise<void> {
    const current = this.clients.get(key);
    if (!current) return;
    this.clients.delete(key);
    await closeClient(current.redis);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.clients.keys()].map((key) => this.release(key)));
  }
}
