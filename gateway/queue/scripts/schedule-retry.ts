import { LuaScript } from './lua-script.js';
import { OWNED_BY_LUA } from './owned-by.js';

/**
 * A delivery failed and will be retried: park the message (with its new retry count) until it is
 * due, and take its entry off the stream, atomically, so it is neither lost nor duplicated.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the retry schedule (sorted set: message id -> due time, ms)
 * KEYS[3]  the retry messages (hash: message id -> encoded message)
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the consumer that delivered it
 * ARGV[4]  the message id
 * ARGV[5]  due time, epoch ms
 * ARGV[6]  the encoded message
 * Returns 1, or 0 when the entry is no longer this consumer's.
 */
export const scheduleRetry = new LuaScript(
  'schedule-retry',
  3,
  `${OWNED_BY_LUA}
if not owned_by(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
`,
);
