import { LuaScript } from './lua-script.js';
import { WORKFLOW_STEPS_BODY_LUA } from './workflow-steps-body.js';

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
  `${WORKFLOW_STEPS_BODY_LUA}
local existing = redis.call('HGET', KEYS[1], 'firstMessageId')
if existing then return {0, existing} end
redis.call('HSET', KEYS[1], 'config', ARGV[2], 'state', 'RUN_STARTED', 'createdAt', ARGV[3], 'firstMessageId', ARGV[5], 'contextBytes', ARGV[7])
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return {1, steps_body(KEYS[1], KEYS[2], tonumber(ARGV[6]), ARGV[4])}
`,
);
