import { SERVER_NOW_LUA } from './server-now.js';
import { LuaScript } from './lua-script.js';

/**
 * Takes over the deliveries of consumers whose heartbeat is older than the lease (their gateway
 * replica died): at most ARGV[4] of the oldest dead consumer's pending entries move to ARGV[2],
 * whatever their idle time. A dead consumer that holds nothing any more is forgotten (heartbeat
 * and group membership). Deciding "dead" and claiming are one step, so two survivors never both
 * take one entry, and a consumer that heartbeats again in between keeps its entries.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the consumer heartbeats (sorted set: consumer -> last heartbeat, ms)
 * ARGV[1]  the consumer group
 * ARGV[2]  the claiming consumer
 * ARGV[3]  the lease, ms
 * ARGV[4]  the most entries to claim
 * Returns {dead consumer, XCLAIM reply}, or {} when no dead consumer holds anything.
 */
export const claimDeadConsumer = new LuaScript(
  'claim-dead-consumer',
  2,
  `${SERVER_NOW_LUA}
local now = server_now()
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, 16)
for _, consumer in ipairs(dead) do
  if consumer ~= ARGV[2] then
    local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[4]), consumer)
    if #pending == 0 then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], consumer)
      redis.call('ZREM', KEYS[2], consumer)
    else
      local ids = {}
      for i, entry in ipairs(pending) do ids[i] = entry[1] end
      return {consumer, redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids))}
    end
  end
end
return {}
`,
);
