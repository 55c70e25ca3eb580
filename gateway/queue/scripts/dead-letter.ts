import { ENTRY_PRESENT_LUA } from './entry-present.js';
import { LuaScript } from './lua-script.js';
import { OWNED_BY_LUA } from './owned-by.js';

/**
 * A message is out of retries (or must not be retried): record it on the dead-letter list, keep
 * that list capped, and take the entry off the stream and the index, atomically. A message
 * cancelled during the attempt (its entry gone) is only acknowledged.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the dead-letter list (newest first)
 * KEYS[3]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the consumer that delivered it
 * ARGV[4]  the dead letter, JSON
 * ARGV[5]  how many dead letters to keep
 * ARGV[6]  the message id ('' when unknown)
 * Returns 1; 0 when the entry is no longer this consumer's; 2 when the message was cancelled.
 */
export const deadLetter = new LuaScript(
  'dead-letter',
  3,
  `${OWNED_BY_LUA}${ENTRY_PRESENT_LUA}
if not owned_by(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
if not entry_present(KEYS[1], ARGV[2]) then
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
  return 2
end
redis.call('LPUSH', KEYS[2], ARGV[4])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
if ARGV[6] ~= '' and redis.call('HGET', KEYS[3], ARGV[6]) == ARGV[2] then
  redis.call('HDEL', KEYS[3], ARGV[6])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
`,
);
