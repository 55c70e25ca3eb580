import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Stores published messages, all or none: a message due now goes onto the stream and into the
 * stream index; a delayed one into the schedule until it is due. Each gets its CREATED event.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3..] quadruples: message id, due time (ms; 0 = now), encoded message, CREATED event (JSON)
 * Returns the number of messages stored.
 */
export const enqueueMessages = new LuaScript(
  'enqueue-messages',
  5,
  `${RECORD_EVENT_LUA}
local stored = 0
for i = 3, #ARGV, 4 do
  local id, due, message = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  if due > 0 then
    redis.call('HSET', KEYS[4], id, message)
    redis.call('ZADD', KEYS[3], due, id)
  else
    local entry = redis.call('XADD', KEYS[1], '*', ARGV[1], message)
    redis.call('HSET', KEYS[2], id, entry)
  end
  record_event(KEYS[5], ARGV[2], ARGV[i + 3])
  stored = stored + 1
end
return stored
`,
);
