import { SERVER_NOW_LUA } from './server-now.js';
import { LuaScript } from './lua-script.js';

/**
 * A consumer says it is alive: its heartbeat becomes the Redis server's clock, so replicas whose
 * clocks disagree still judge each other's leases by one clock.
 *
 * KEYS[1]  the consumer heartbeats (sorted set: consumer -> last heartbeat, ms)
 * ARGV[1]  the consumer
 * Returns the heartbeat's time, ms.
 */
export const heartbeatConsumer = new LuaScript(
  'heartbeat-consumer',
  1,
  `${SERVER_NOW_LUA}
local now = server_now()
redis.call('ZADD', KEYS[1], now, ARGV[1])
return now
`,
);
