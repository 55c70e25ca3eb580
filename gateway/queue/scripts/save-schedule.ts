import { LuaScript } from './lua-script.js';

/**
 * Creates or replaces a schedule: its record, its message template and its next tick, together.
 *
 * KEYS[1]  the schedules hash (id -> record JSON)
 * KEYS[2]  the schedule messages hash (id -> encoded message template)
 * KEYS[3]  the schedule ticks sorted set (id -> next tick, ms)
 * ARGV[1]  the schedule id
 * ARGV[2]  the record JSON
 * ARGV[3]  the encoded message template
 * ARGV[4]  the next tick (ms), or "" for a paused schedule (not in the ticks set)
 * Returns 1 when the schedule is new, 0 when it replaced one.
 */
export const saveSchedule = new LuaScript(
  'save-schedule',
  3,
  `
local created = redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
return created
`,
);
