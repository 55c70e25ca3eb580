import { LuaScript } from './lua-script.js';
import { OWNED_BY_LUA } from './owned-by.js';

/**
 * A message is out of retries (or must not be retried): record it on the dead-letter list, keep
 * that list capped, and take the entry off the stream, atomically.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the dead-letter list (newest first)
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the consumer that delivered it
 * ARGV[4]  the dead letter, JSON
 * ARGV[5]  how many dead letters to keep
 * Returns 1, or 0 when the entry is no longer this consumer's.
 */
export const deadLetter = new LuaScript(
  'dead-letter',
  2,
  `${OWNED_BY_LUA}
if not owned_by(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[4])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
`,
);
