import { LuaScript } from './lua-script.js';
import { WORKFLOW_STEPS_BODY_LUA } from './workflow-steps-body.js';

/**
 * A step of a running workflow run is published: it joins the run's steps, and the delivery that
 * carries it gets the steps up to and including it (what the SDK's lazy fetch cuts the list to by
 * message id), taken in the same step so parallel steps published through two replicas at once
 * each see a list in one order. A run that is no longer running takes no step: the SDK, told 400,
 * stops ("Tried to append to a cancelled workflow", workflow-requests.ts). A step past the run's
 * step count or context size is not appended (the caller answers 412, which fails the run). The
 * run's context size is counted in its hash as steps join; a run started before the count
 * existed counts from its next step.
 *
 * KEYS[1]  the run (hash; field contextBytes: the payload's and the steps' body bytes)
 * KEYS[2]  the run's steps (list; the first is the payload)
 * ARGV[1]  the step as raw step JSON
 * ARGV[2]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * ARGV[3]  the step's body bytes
 * ARGV[4]  the most steps the run may have, its payload not counted
 * ARGV[5]  the largest context the run may have, bytes
 * Returns {1, body} when appended, {0, the run's state} when not running ('' when unknown),
 * {2, steps so far} over the step count, {3, context bytes so far} over the context size.
 */
export const appendWorkflowStep = new LuaScript(
  'append-workflow-step',
  2,
  `${WORKFLOW_STEPS_BODY_LUA}
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'RUN_STARTED' then return {0, state or ''} end
local steps = redis.call('LLEN', KEYS[2]) - 1
if steps >= tonumber(ARGV[4]) then return {2, tostring(steps)} end
local context = tonumber(redis.call('HGET', KEYS[1], 'contextBytes') or '0')
if context + tonumber(ARGV[3]) > tonumber(ARGV[5]) then return {3, tostring(context)} end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[1], 'contextBytes', ARGV[3])
return {1, steps_body(KEYS[2], tonumber(ARGV[2]))}
`,
);
