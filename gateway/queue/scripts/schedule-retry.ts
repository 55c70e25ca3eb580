import { ENTRY_PRESENT_LUA } from './entry-present.js';
import { LuaScript } from './lua-script.js';
import { OWNED_BY_LUA } from './owned-by.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * A delivery failed and will be retried: park the message (with its new retry count) until it is
 * due, and take its entry off the stream and the index, atomically, so it is neither lost nor
 * duplicated, and record the attempt's ERROR and the RETRY events. A message cancelled during the
 * attempt (its entry gone) is only acknowledged.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[3]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * KEYS[5]  the events stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the consumer that delivered it
 * ARGV[4]  the message id
 * ARGV[5]  due time, epoch ms
 * ARGV[6]  the encoded message
 * ARGV[7]  the events cap (0: record none)
 * ARGV[8]  the ERROR event (JSON)
 * ARGV[9]  the RETRY event (JSON)
 * Returns 1; 0 when the entry is no longer this consumer's; 2 when the message was cancelled.
 */
export const scheduleRetry = new LuaScript(
  'schedule-retry',
  5,
  `${OWNED_BY_LUA}${ENTRY_PRESENT_LUA}${RECORD_EVENT_LUA}
if not owned_by(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
if not entry_present(KEYS[1], ARGV[2]) then
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
  return 2
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
if redis.call('HGET', KEYS[4], ARGV[4]) == ARGV[2] then redis.call('HDEL', KEYS[4], ARGV[4]) end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
record_event(KEYS[5], ARGV[7], ARGV[8])
record_event(KEYS[5], ARGV[7], ARGV[9])
return 1
`,
);
