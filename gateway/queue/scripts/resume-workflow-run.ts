/**
 * Lua snippet: `resume_run(k, id, config, created_at)`. A failed workflow run resumes from the DLQ
 * (client.dlq.resume) as a new run, as Upstash does ("a new workflow run ID is generated, but the
 * workflow maintains the state and results from previously completed steps"): the new run `id`
 * gets the failed one's steps, counted steps and context, with its own settings (`config`, JSON)
 * and creation time, and is RUN_STARTED; the failed run keeps its end. Only a failed run, and only
 * into a run id not taken. Used by act-on-workflow-letter, which stores the resumed step and takes
 * the dead letter in the same script.
 *
 * k.failed        the failed run (hash: state, firstMessageId, contextBytes, repeatedSteps, inlineBytes)
 * k.failed_steps  the failed run's steps (list of raw step JSON)
 * k.failed_ids    the failed run's counted step ids (set)
 * k.run, k.steps, k.ids  the new run's hash, steps and counted step ids
 * k.order         the runs by creation time (sorted set: run id -> createdAt)
 * Returns 1 once the new run started, 0 if the failed run was not RUN_FAILED (or is unknown),
 * -1 if the new run id is taken.
 */
export const RESUME_WORKFLOW_RUN_LUA = `
local function resume_run(k, id, config, created_at)
  local failed = redis.call('HMGET', k.failed, 'state', 'firstMessageId', 'contextBytes', 'repeatedSteps', 'inlineBytes')
  if failed[1] ~= 'RUN_FAILED' then return 0 end
  if redis.call('EXISTS', k.run) == 1 then return -1 end
  redis.call('HSET', k.run, 'config', config, 'state', 'RUN_STARTED', 'createdAt', created_at,
    'firstMessageId', failed[2] or '', 'contextBytes', failed[3] or '0', 'repeatedSteps', failed[4] or '0')
  -- The list's byte count (workflow-steps-body.ts); a run from before the count starts without it.
  if failed[5] then redis.call('HSET', k.run, 'inlineBytes', failed[5]) end
  local steps = redis.call('LRANGE', k.failed_steps, 0, -1)
  for i = 1, #steps, 1000 do
    redis.call('RPUSH', k.steps, unpack(steps, i, math.min(i + 999, #steps)))
  end
  local ids = redis.call('SMEMBERS', k.failed_ids)
  for i = 1, #ids, 1000 do
    redis.call('SADD', k.ids, unpack(ids, i, math.min(i + 999, #ids)))
  end
  redis.call('ZADD', k.order, created_at, id)
  return 1
end
`;
