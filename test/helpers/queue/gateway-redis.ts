import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { connectAsGateway, connectTestRedis } from './redis-snapshot.js';

/** A suite's real redis-server and its connections; see {@link useGatewayRedis}. */
export interface GatewayRedis {
  readonly server: RedisServer;
  /** Set up as the gateway's shared connection (auto-pipelined). */
  readonly redis: Redis;
  /** The test's own plain connection, to set up and look at the database. */
  readonly inspect: Redis;
  /**
   * One more connection set up as the gateway's (another replica's, or a worker's blocking one),
   * closed after the suite: call it in a beforeAll or a test.
   */
  connect(options?: { blocking: boolean }): Redis;
}

/**
 * Registers the suite's beforeAll/afterAll (call it in the describe block, before hooks that use
 * it): a real redis-server with the gateway's shared connection and the test's own before the
 * tests, and after them every connection closed and the server stopped.
 */
export function useGatewayRedis(): GatewayRedis {
  let server: RedisServer;
  let redis: Redis;
  let inspect: Redis;
  const connections: Redis[] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = connectAsGateway(server, { blocking: false });
    inspect = connectTestRedis(server);
  });
  afterAll(async () => {
    for (const connection of [redis, inspect, ...connections]) connection?.disconnect();
    await server?.stop();
  });

  return {
    get server() {
      return server;
    },
    get redis() {
      return redis;
    },
    get inspect() {
      return inspect;
    },
    connect(options = { blocking: false }) {
      const connection = connectAsGateway(server, options);
      connections.push(connection);
      return connection;
    },
  };
}
