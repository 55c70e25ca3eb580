import { LuaScript } from './lua-script.js';

/**
 * Deletes a schedule with everything kept for it; messages it already fired stay queued.
 *
 * KEYS[1]  the schedules hash
 * KEYS[2]  the schedule messages hash
 * KEYS[3]  the schedule ticks sorted set
 * KEYS[4]  the schedule last ticks hash
 * KEYS[5]  the schedule last messages hash
 * KEYS[6]  the schedule claims hash
 * ARGV[1]  the schedule id
 * Returns 1 when it existed, 0 otherwise.
 */
export const deleteSchedule = new LuaScript(
  'delete-schedule',
  6,
  `
local existed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[6], ARGV[1])
return existed
`,
);
