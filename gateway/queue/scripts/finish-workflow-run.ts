import { LuaScript } from './lua-script.js';

/**
 * A running workflow run ends: succeeded (the SDK's DELETE after the last step), cancelled
 * (context.cancel, client.cancel) or failed (a step dead-lettered). Only a running run ends, once:
 * a cancel that races the last step's success leaves whichever came first.
 *
 * KEYS[1]  the run (hash)
 * KEYS[2]  the finished runs by finish time (sorted set: run id -> finishedAt), which retention trims
 * ARGV[1]  the new state: RUN_SUCCESS, RUN_CANCELED or RUN_FAILED
 * ARGV[2]  the end time, ms
 * ARGV[3]  the field that keeps what it ended with: 'response' or 'failure' ('' for none)
 * ARGV[4]  that value
 * ARGV[5]  the run id
 * Returns 1 if it ended the run, 0 if the run was not running (or is unknown).
 */
export const finishWorkflowRun = new LuaScript(
  'finish-workflow-run',
  2,
  `
if redis.call('HGET', KEYS[1], 'state') ~= 'RUN_STARTED' then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'finishedAt', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], ARGV[3], ARGV[4]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
return 1
`,
);
