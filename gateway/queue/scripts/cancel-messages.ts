import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Cancels pending messages by id: a scheduled one (delayed or waiting for a retry) leaves the
 * schedule; a queued one has its stream entry deleted, also when a worker holds it, which that
 * worker sees before it sends (entry-present) or when it records the attempt. Each cancelled
 * message gets its CANCEL_REQUESTED and CANCELLED events (built by the caller from the message).
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the events stream
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2..] triples: message id, CANCEL_REQUESTED event, CANCELLED event (JSON; '' = none)
 * Returns the number of messages cancelled (unknown or finished ids count for nothing).
 */
export const cancelMessages = new LuaScript(
  'cancel-messages',
  5,
  `${RECORD_EVENT_LUA}
local cancelled = 0
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local done = false
  if redis.call('HDEL', KEYS[4], id) == 1 then
    redis.call('ZREM', KEYS[3], id)
    done = true
  else
    local entry = redis.call('HGET', KEYS[2], id)
    if entry then
      redis.call('HDEL', KEYS[2], id)
      done = redis.call('XDEL', KEYS[1], entry) == 1
    end
  end
  if done then
    record_event(KEYS[5], ARGV[1], ARGV[i + 1])
    record_event(KEYS[5], ARGV[1], ARGV[i + 2])
    cancelled = cancelled + 1
  end
end
return cancelled
`,
);
