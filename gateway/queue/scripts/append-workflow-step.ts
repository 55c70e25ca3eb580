import { LuaScript } from './lua-script.js';
import { WORKFLOW_STEPS_BODY_LUA } from './workflow-steps-body.js';

/**
 * A step of a running workflow run is published: it joins the run's steps, and the delivery that
 * carries it gets the steps up to and including it (what the SDK's lazy fetch cuts the list to by
 * message id), taken in the same step so parallel steps published through two replicas at once
 * each see a list in one order. A run that is no longer running takes no step: the SDK, told 400,
 * stops ("Tried to append to a cancelled workflow", workflow-requests.ts).
 *
 * KEYS[1]  the run (hash)
 * KEYS[2]  the run's steps (list)
 * ARGV[1]  the step as raw step JSON
 * ARGV[2]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * Returns {1, body} when appended, {0, the run's state} when not running ('' when unknown).
 */
export const appendWorkflowStep = new LuaScript(
  'append-workflow-step',
  2,
  `${WORKFLOW_STEPS_BODY_LUA}
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'RUN_STARTED' then return {0, state or ''} end
redis.call('RPUSH', KEYS[2], ARGV[1])
return {1, steps_body(KEYS[2], tonumber(ARGV[2]))}
`,
);
