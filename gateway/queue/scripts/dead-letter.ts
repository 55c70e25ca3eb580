import { ENTRY_PRESENT_LUA } from './entry-present.js';
import { LuaScript } from './lua-script.js';
import { OWNED_BY_LUA } from './owned-by.js';
import { RECORD_EVENT_LUA } from './record-event.js';
import { TRIM_DEAD_LETTERS_LUA } from './trim-dead-letters.js';

/**
 * A message is out of retries (or must not be retried): record it in the dead-letter queue, keep
 * that queue within its retention, take the entry off the stream and the index, and record the
 * attempt's ERROR and the FAILED events, atomically.
 * A message cancelled during the attempt (its entry gone) is only acknowledged.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the dead letters (hash: dlqId -> JSON)
 * KEYS[3]  the dead-letter order (sorted set of dlqIds, score 0)
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * KEYS[5]  the events stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the consumer that delivered it
 * ARGV[4]  the dlqId
 * ARGV[5]  the dead letter, JSON
 * ARGV[6]  the message id ('' when unknown)
 * ARGV[7]  the retention floor: dlqIds below it are expired
 * ARGV[8]  the most dead letters to keep
 * ARGV[9]  the events cap (0: record none)
 * ARGV[10] the ERROR event (JSON)
 * ARGV[11] the FAILED event (JSON)
 * Returns 1; 0 when the entry is no longer this consumer's; 2 when the message was cancelled.
 */
export const deadLetter = new LuaScript(
  'dead-letter',
  5,
  `${OWNED_BY_LUA}${ENTRY_PRESENT_LUA}${TRIM_DEAD_LETTERS_LUA}${RECORD_EVENT_LUA}
if not owned_by(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
if not entry_present(KEYS[1], ARGV[2]) then
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
  return 2
end
redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
redis.call('ZADD', KEYS[3], 0, ARGV[4])
trim_dead_letters(KEYS[2], KEYS[3], ARGV[7], tonumber(ARGV[8]), 100)
if ARGV[6] ~= '' and redis.call('HGET', KEYS[4], ARGV[6]) == ARGV[2] then
  redis.call('HDEL', KEYS[4], ARGV[6])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
record_event(KEYS[5], ARGV[9], ARGV[10])
record_event(KEYS[5], ARGV[9], ARGV[11])
return 1
`,
);
