import { LuaScript } from './lua-script.js';

/**
 * Pauses or resumes a schedule: its record's isPaused, and its place in the ticks set (a paused
 * schedule has none, so no replica fires it; a resumed one ticks next at ARGV[3]).
 *
 * KEYS[1]  the schedules hash (id -> record JSON)
 * KEYS[2]  the schedule ticks sorted set
 * ARGV[1]  the schedule id
 * ARGV[2]  "1" to pause, "0" to resume
 * ARGV[3]  the next tick (ms) when resuming
 * Returns 1, or 0 when there is no such schedule.
 */
export const setSchedulePaused = new LuaScript(
  'set-schedule-paused',
  2,
  `
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored then return 0 end
local record = cjson.decode(stored)
local paused = ARGV[2] == '1'
if record.isPaused ~= paused then
  record.isPaused = paused
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
end
if paused then
  redis.call('ZREM', KEYS[2], ARGV[1])
elseif not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
return 1
`,
);
