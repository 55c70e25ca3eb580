import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';

/**
 * Pauses or resumes a schedule: its record's isPaused, and its place in the ticks set (a paused
 * schedule has none, so no replica fires it; a resumed one ticks next at ARGV[3]). The ticks set
 * holds exactly the active schedules, which the binding's quota counts (save-schedule.ts), so a
 * resume that would pass the quota is refused here, in the same step as the count.
 *
 * KEYS[1]  the schedules hash (id -> record JSON)
 * KEYS[2]  the schedule ticks sorted set
 * ARGV[1]  the schedule id
 * ARGV[2]  "1" to pause, "0" to resume
 * ARGV[3]  the next tick (ms) when resuming
 * ARGV[4]  the most active schedules the binding may have
 * Returns 1, 0 when there is no such schedule, or the quota reply QUOTA maxSchedules <ARGV[4]>
 * (quota-exceeded.ts; nothing changed) when resuming a paused schedule while the binding has
 * ARGV[4] active schedules already.
 */
export const setSchedulePaused = new LuaScript(
  'set-schedule-paused',
  2,
  `${QUOTA_EXCEEDED_LUA}
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored then return 0 end
local paused = ARGV[2] == '1'
local active = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not paused and not active and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return quota_exceeded('maxSchedules', ARGV[4])
end
local record = cjson.decode(stored)
if record.isPaused ~= paused then
  record.isPaused = paused
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
end
if paused then
  redis.call('ZREM', KEYS[2], ARGV[1])
elseif not active then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
return 1
`,
);
