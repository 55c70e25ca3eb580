import { LuaScript } from './lua-script.js';

/**
 * A failed workflow run resumes from the DLQ (client.dlq.resume): it runs again from its failed
 * step, so it is running again and no longer holds the end it failed with, nor its failure
 * callback's state. Only a failed run.
 *
 * KEYS[1]  the run (hash)
 * Returns 1 if it reopened the run, 0 if the run was not RUN_FAILED (or is unknown).
 */
export const reopenWorkflowRun = new LuaScript(
  'reopen-workflow-run',
  1,
  `
if redis.call('HGET', KEYS[1], 'state') ~= 'RUN_FAILED' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'RUN_STARTED')
redis.call('HDEL', KEYS[1], 'finishedAt', 'failure', 'callbackState', 'callbackDlqId')
return 1
`,
);
