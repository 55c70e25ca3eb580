import { LuaScript } from './lua-script.js';

/**
 * Moves scheduled messages that are due (delayed ones and retries) onto the stream, where any
 * replica's worker picks them up, and indexes their entries. Atomic, so replicas that run it at
 * the same moment never move one message twice.
 *
 * KEYS[1]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[2]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[3]  the message stream
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  now, epoch ms
 * ARGV[2]  the most messages to move
 * ARGV[3]  the stream entry field that holds a message
 * Returns the number of messages moved.
 */
export const promoteDueMessages = new LuaScript(
  'promote-due-messages',
  4,
  `
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
