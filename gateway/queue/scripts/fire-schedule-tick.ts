import { STORE_MESSAGES_LUA } from './enqueue-messages.js';
import { LuaScript } from './lua-script.js';

/**
 * Fires one tick of a schedule, once: only if the schedule's next tick is still the one the
 * caller read (no other replica fired it, it was not paused, updated or deleted meanwhile), move
 * it to the following tick, record the fired one, and store the tick's messages as a publish
 * stores them (enqueue-messages.ts: the stream and its index, or the delay schedule), each with its
 * CREATED event.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the delay schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the schedule ticks sorted set (schedule id -> next tick, ms)
 * KEYS[6]  the schedule last ticks hash (schedule id -> last fired tick, ms)
 * KEYS[7]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the schedule id
 * ARGV[3]  the tick being fired (ms), as read from KEYS[5]
 * ARGV[4]  the following tick (ms)
 * ARGV[5]  the events cap (0: record none)
 * ARGV[6..] quadruples: message id, due time (ms; 0 = now), encoded message, CREATED event (JSON;
 *          '' = none): one, or one per URL group endpoint
 * Returns 1 when fired, 0 when the tick was not (or no longer) due.
 */
export const fireScheduleTick = new LuaScript(
  'fire-schedule-tick',
  7,
  `${STORE_MESSAGES_LUA}
local due = redis.call('ZSCORE', KEYS[5], ARGV[2])
if not due or tonumber(due) ~= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
redis.call('HSET', KEYS[6], ARGV[2], ARGV[3])
store_messages(KEYS, ARGV[1], ARGV, 6, 4, KEYS[7], ARGV[5])
return 1
`,
);
