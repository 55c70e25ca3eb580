import { LuaScript } from './lua-script.js';

/**
 * Moves scheduled messages that are due (delayed ones and retries) onto the stream, where any
 * replica's worker picks them up, and indexes their entries, if the caller is the binding's mover:
 * it holds the mover lease, or takes it because no one does. Atomic, so even two movers (one
 * whose lease lapsed while it stalled) never move one message twice.
 *
 * KEYS[1]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[2]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[3]  the message stream
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * KEYS[5]  the mover lease (string: the mover's name, expiring)
 * ARGV[1]  now, epoch ms
 * ARGV[2]  the most messages to move
 * ARGV[3]  the stream entry field that holds a message
 * ARGV[4]  the caller's name ('' = move without the lease: tools and tests)
 * ARGV[5]  the lease, ms: how long the caller stays the mover without moving again
 * Returns the number of messages moved, or -1 when another replica is the mover.
 */
export const promoteDueMessages = new LuaScript(
  'promote-due-messages',
  5,
  `
if ARGV[4] ~= '' then
  if redis.call('GET', KEYS[5]) == ARGV[4] then
    redis.call('PEXPIRE', KEYS[5], ARGV[5])
  elseif not redis.call('SET', KEYS[5], ARGV[4], 'NX', 'PX', ARGV[5]) then
    return -1
  end
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  local message = redis.call('HGET', KEYS[2], id)
  if message then
    local entry = redis.call('XADD', KEYS[3], '*', ARGV[3], message)
    redis.call('HSET', KEYS[4], id, entry)
  end
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
end
return #due
`,
);
