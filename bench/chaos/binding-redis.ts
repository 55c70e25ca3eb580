import { Redis } from 'ioredis';

/** The binding's database, reached as the gateway reaches it: the Redis fault's probe, its AOF state, a lost publish's keys. */
export function connectBindingRedis(
  queueUrl: URL,
  token: string,
  running: Array<{ name: string }>,
): () => Redis {
  const port = Number(running.find((p) => p.name.startsWith('redis-server:'))?.name.split(':')[1]);
  let client: Redis | undefined;
  return () =>
    (client ??= new Redis({
      host: '127.0.0.1',
      port,
      password: token,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      lazyConnect: false,
    }).on('error', () => undefined));
}
