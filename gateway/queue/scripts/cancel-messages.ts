import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Lua snippet shared by the cancel scripts: `cancel_message(stream, index, pending, schedule,
 * events, cap, id, requested, cancelled)` cancels one message. One off the stream (delayed, waiting
 * for a retry, or waiting in a queue or a flow-control key) leaves `pending` and `schedule`; one
 * on the stream has its entry deleted, also when a worker holds it, which that worker sees before
 * it sends (entry-present) or when it records the attempt. Records the CANCEL_REQUESTED and
 * CANCELLED events of a cancelled message, and returns where it was ('pending' or 'streamed'), or
 * false for an unknown or finished id. What else holds the message (a queue's or a key's lists) is
 * the caller's to clear.
 */
export const CANCEL_MESSAGE_LUA = `${RECORD_EVENT_LUA}
local function cancel_message(stream, index, pending, schedule, events, cap, id, requested, cancelled)
  local where = false
  if redis.call('HDEL', pending, id) == 1 then
    redis.call('ZREM', schedule, id)
    where = 'pending'
  else
    local entry = redis.call('HGET', index, id)
    if entry then
      redis.call('HDEL', index, id)
      if redis.call('XDEL', stream, entry) == 1 then where = 'streamed' end
    end
  end
  if where then
    record_event(events, cap, requested)
    record_event(events, cap, cancelled)
  end
  return where
end
`;

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
  `${CANCEL_MESSAGE_LUA}
local cancelled = 0
for i = 2, #ARGV, 3 do
  if cancel_message(KEYS[1], KEYS[2], KEYS[4], KEYS[3], KEYS[5], ARGV[1], ARGV[i], ARGV[i + 1], ARGV[i + 2]) then
    cancelled = cancelled + 1
  end
end
return cancelled
`,
);
