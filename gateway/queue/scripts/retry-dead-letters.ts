import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Sends dead letters again: each one leaves the dead-letter queue and its new message is stored
 * as a publish stores it (stream and index, or the schedule when delayed), in one step, so a
 * letter is never both retried and kept, nor retried twice by two concurrent calls.
 *
 * KEYS[1]  the dead letters (hash: dlqId -> JSON)
 * KEYS[2]  the dead-letter order (sorted set of dlqIds, score 0)
 * KEYS[3]  the message stream
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * KEYS[5]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[6]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[7]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3..] quintuples: dlqId, new message id, due time (ms; 0 = now), encoded message, CREATED event
 * Returns, per quintuple, 1 if it was retried or 0 if the dead letter was gone.
 */
export const retryDeadLetters = new LuaScript(
  'retry-dead-letters',
  7,
  `${RECORD_EVENT_LUA}
local results = {}
for i = 3, #ARGV, 5 do
  local dlq_id, id, due, message = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  if redis.call('HDEL', KEYS[1], dlq_id) == 1 then
    redis.call('ZREM', KEYS[2], dlq_id)
    if due > 0 then
      redis.call('HSET', KEYS[6], id, message)
      redis.call('ZADD', KEYS[5], due, id)
    else
      local entry = redis.call('XADD', KEYS[3], '*', ARGV[1], message)
      redis.call('HSET', KEYS[4], id, entry)
    end
    record_event(KEYS[7], ARGV[2], ARGV[i + 4])
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
return results
`,
);
