import { Redis } from 'ioredis';
import type { QueueBindingConnection, QueueBindingServer } from '../../../api/queue-binding.js';
import { DEFAULT_DATABASE_PORT } from '../../../api/queue-binding.js';

/** The oldest Redis with everything the queue uses (Streams consumer groups and XAUTOCLAIM). */
export const MIN_REDIS_VERSION = [6, 2] as const;

export type DatabaseCheck =
  | { reachable: true; server: QueueBindingServer }
  | {
      reachable: false;
      reason: 'Unreachable' | 'AuthenticationFailed' | 'UnsupportedVersion';
      message: string;
    };

function isAuthError(message: string): boolean {
  return /WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message);
}

/**
 * The server INFO server describes. Valkey answers `server_name:valkey` and `valkey_version`
 * beside a `redis_version` of the Redis it is compatible with (7.2.4 for Valkey 8); Redis has
 * neither field. The capability check reads redis_version on both.
 */
export function parseServerInfo(info: string): { server: QueueBindingServer; redisVersion: string } {
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const redisVersion = field('redis_version') ?? '0';
  if (field('server_name') === 'valkey')
    return { server: { engine: 'valkey', version: field('valkey_version') ?? redisVersion }, redisVersion };
  return { server: { engine: 'redis', version: redisVersion }, redisVersion };
}

function isSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > MIN_REDIS_VERSION[0] || (major === MIN_REDIS_VERSION[0] && minor >= MIN_REDIS_VERSION[1]);
}

/**
 * Connects once with the binding's password, as the gateway will, and asks for the server version:
 * reachable and authenticated, and new enough for the queue. No retries (the next reconcile is
 * the retry) and no key is read or written.
 */
export async function checkDatabase(
  connection: QueueBindingConnection,
  password: string,
  timeoutMs: number,
): Promise<DatabaseCheck> {
  const host = connection.host;
  const redis = new Redis({
    host,
    port: connection.port ?? DEFAULT_DATABASE_PORT,
    db: connection.db ?? 0,
    password,
    tls: connection.tls ? { servername: host } : undefined,
    protocol: 2,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The cause (refused, WRONGPASS) arrives as an 'error' event; the rejected call only says "closed".
  let cause: Error | undefined;
  redis.on('error', (err: Error) => (cause ??= err));
  try {
    await redis.connect();
    const { server, redisVersion } = parseServerInfo(await redis.info('server'));
    if (!isSupported(redisVersion)) {
      return {
        reachable: false,
        reason: 'UnsupportedVersion',
        message: `Redis ${redisVersion} is older than ${MIN_REDIS_VERSION.join('.')}`,
      };
    }
    return { reachable: true, server };
  } catch (err) {
    const message = cause?.message ?? (err instanceof Error ? err.message : String(err));
    if (isAuthError(message))
      return {
        reachable: false,
        reason: 'AuthenticationFailed',
        message: 'the database refused the password',
      };
    return {
      reachable: false,
      reason: 'Unreachable',
      message: `cannot reach ${host}:${connection.port ?? DEFAULT_DATABASE_PORT}: ${message}`,
    };
  } finally {
    redis.disconnect();
  }
}
