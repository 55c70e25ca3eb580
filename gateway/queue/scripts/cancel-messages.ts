import { LuaScript } from './lua-script.js';

/**
 * Cancels pending messages by id: a scheduled one (delayed or waiting for a retry) leaves the
 * schedule; a queued one has its stream entry deleted, also when a worker holds it, which that
 * worker sees before it sends (entry-present) or when it records the attempt.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * ARGV     the message ids
 * Returns the number of messages cancelled (unknown or finished ids count for nothing).
 */
export const cancelMessages = new LuaScript(
  'cancel-messages',
  4,
  `
local cancelled = 0
for _, id in ipairs(ARGV) do
  if redis.call('HDEL', KEYS[4], id) == 1 then
    redis.call('ZREM', KEYS[3], id)
    cancelled = cancelled + 1
  else
    local entry = redis.call('HGET', KEYS[2], id)
    if entry then
      redis.call('HDEL', KEYS[2], id)
      cancelled = cancelled + redis.call('XDEL', KEYS[1], entry)
    end
  end
end
return cancelled
`,
);
