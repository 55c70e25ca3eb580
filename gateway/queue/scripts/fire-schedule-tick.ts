import { LuaScript } from './lua-script.js';

/**
 * Fires one tick of a schedule, once: only if the schedule's next tick is still the one the
 * caller read (no other replica fired it, it was not paused, updated or deleted meanwhile), move
 * it to the following tick, record the fired one, and put the tick's messages on the stream.
 *
 * KEYS[1]  the schedule ticks sorted set (id -> next tick, ms)
 * KEYS[2]  the schedule last ticks hash (id -> last fired tick, ms)
 * KEYS[3]  the message stream
 * ARGV[1]  the schedule id
 * ARGV[2]  the tick being fired (ms), as read from KEYS[1]
 * ARGV[3]  the following tick (ms)
 * ARGV[4]  the stream entry field that holds a message
 * ARGV[5..] the encoded messages of this tick (one, or one per URL group endpoint)
 * Returns 1 when fired, 0 when the tick was not (or no longer) due.
 */
export const fireScheduleTick = new LuaScript(
  'fire-schedule-tick',
  3,
  `
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) ~= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
for i = 5, #ARGV do
  redis.call('XADD', KEYS[3], '*', ARGV[4], ARGV[i])
end
return 1
`,
);
