import { LuaScript } from './lua-script.js';
import { WORKFLOW_STEPS_BODY_LUA } from './workflow-steps-body.js';

/**
 * Lua snippet: `start_run(k, id, config, created_at, first_step, first_message_id, limit,
 * payload_bytes)` starts run `id` in the keys `k` = {run, steps, order} (as the script below names
 * them) and returns the script's answer; the script below and act-on-workflow-letter (a DLQ
 * restart) share it.
 */
export const START_WORKFLOW_RUN_LUA = `${WORKFLOW_STEPS_BODY_LUA}
local function start_run(k, id, config, created_at, first_step, first_message_id, limit, payload_bytes)
  local existing = redis.call('HGET', k.run, 'firstMessageId')
  if existing then return {0, existing} end
  redis.call('HSET', k.run, 'config', config, 'state', 'RUN_STARTED', 'createdAt', created_at,
    'firstMessageId', first_message_id, 'contextBytes', payload_bytes)
  redis.call('RPUSH', k.steps, first_step)
  redis.call('ZADD', k.order, created_at, id)
  return {1, steps_body(k.run, k.steps, tonumber(limit), first_step)}
end
`;

/**
 * A trigger starts a workflow run: its settings, state RUN_STARTED and its initial payload as the
 * first step, in one step, so two replicas given the same run id (the SDK's trigger with a
 * `workflowRunId`, sent twice) start it once. The second is told the first trigger's message id.
 *
 * KEYS[1]  the run (hash: config, state, createdAt, firstMessageId, inlineBytes, ...)
 * KEYS[2]  the run's steps (list of raw step JSON)
 * KEYS[3]  the runs by creation time (sorted set: run id -> createdAt)
 * ARGV[1]  the run id
 * ARGV[2]  the run's WorkflowRunConfig JSON
 * ARGV[3]  the creation time, ms
 * ARGV[4]  the first step: the trigger's message id and base64 payload, as raw step JSON
 * ARGV[5]  the trigger message's id
 * ARGV[6]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * ARGV[7]  the payload's bytes: the run's context so far (append-workflow-step counts the rest)
 * Returns {1, body of the first delivery} once started, {0, the first trigger's message id} when
 * the run already exists.
 */
export const startWorkflowRun = new LuaScript(
  'start-workflow-run',
  3,
  `${START_WORKFLOW_RUN_LUA}
return start_run({run = KEYS[1], steps = KEYS[2], order = KEYS[3]}, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
`,
);
