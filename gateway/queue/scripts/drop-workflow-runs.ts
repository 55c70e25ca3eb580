import { LuaScript } from './lua-script.js';

/**
 * Retention drops finished workflow runs (workflow-run-store.ts trim picks them from the finished
 * runs by finish time): each one's hash, steps, counted step ids and early notices, and its places in both orders. A run found
 * running again (not finished) only leaves the finished order, so no running run loses its steps.
 *
 * KEYS[1]  the finished runs (sorted set: run id -> finishedAt)
 * KEYS[2]  the runs by creation time (sorted set: run id -> createdAt)
 * KEYS[4i - 1], KEYS[4i], KEYS[4i + 1], KEYS[4i + 2]  run i's hash, its steps (list), the events
 *          notified to it before it waited (hash) and its counted steps (set), for i = 1..#ARGV
 * ARGV[i]  run i's id
 * Returns how many runs it dropped.
 */
export const dropWorkflowRuns = new LuaScript(
  'drop-workflow-runs',
  { first: 2, each: 4 },
  `
local dropped = 0
for i = 1, #ARGV do
  local run, steps, notices, stepIds = KEYS[4 * i - 1], KEYS[4 * i], KEYS[4 * i + 1], KEYS[4 * i + 2]
  if redis.call('HGET', run, 'state') ~= 'RUN_STARTED' then
    redis.call('DEL', run, steps, notices, stepIds)
    redis.call('ZREM', KEYS[2], ARGV[i])
    dropped = dropped + 1
  end
  redis.call('ZREM', KEYS[1], ARGV[i])
end
return dropped
`,
);
