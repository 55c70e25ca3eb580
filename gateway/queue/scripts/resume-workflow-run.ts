import { LuaScript } from './lua-script.js';

/**
 * A failed workflow run resumes from the DLQ (client.dlq.resume) as a new run, as Upstash does
 * ("a new workflow run ID is generated, but the workflow maintains the state and results from
 * previously completed steps"): the new run gets the failed one's steps, counted steps and
 * context, with its own id, settings and creation time, and is RUN_STARTED; the failed run keeps
 * its end. Only a failed run, and only into a run id not taken.
 *
 * KEYS[1]  the failed run (hash: state, firstMessageId, contextBytes, repeatedSteps, inlineBytes)
 * KEYS[2]  the failed run's steps (list of raw step JSON)
 * KEYS[3]  the failed run's counted step ids (set)
 * KEYS[4]  the new run (hash)
 * KEYS[5]  the new run's steps (list)
 * KEYS[6]  the new run's counted step ids (set)
 * KEYS[7]  the runs by creation time (sorted set: run id -> createdAt)
 * ARGV[1]  the new run's id
 * ARGV[2]  the new run's WorkflowRunConfig JSON
 * ARGV[3]  the new run's creation time, ms
 * Returns 1 once the new run started, 0 if the failed run was not RUN_FAILED (or is unknown),
 * -1 if the new run id is taken.
 */
export const resumeWorkflowRun = new LuaScript(
  'resume-workflow-run',
  7,
  `
local failed = redis.call('HMGET', KEYS[1], 'state', 'firstMessageId', 'contextBytes', 'repeatedSteps', 'inlineBytes')
if failed[1] ~= 'RUN_FAILED' then return 0 end
if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
redis.call('HSET', KEYS[4], 'config', ARGV[2], 'state', 'RUN_STARTED', 'createdAt', ARGV[3],
  'firstMessageId', failed[2] or '', 'contextBytes', failed[3] or '0', 'repeatedSteps', failed[4] or '0')
-- The list's byte count (workflow-steps-body.ts); a run from before the count starts without it.
if failed[5] then redis.call('HSET', KEYS[4], 'inlineBytes', failed[5]) end
local steps = redis.call('LRANGE', KEYS[2], 0, -1)
for i = 1, #steps, 1000 do
  redis.call('RPUSH', KEYS[5], unpack(steps, i, math.min(i + 999, #steps)))
end
local ids = redis.call('SMEMBERS', KEYS[3])
for i = 1, #ids, 1000 do
  redis.call('SADD', KEYS[6], unpack(ids, i, math.min(i + 999, #ids)))
end
redis.call('ZADD', KEYS[7], ARGV[3], ARGV[1])
return 1
`,
);
