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
 * A step already counted (the SDK sets no deduplication id on a step's publish, so a delivery
 * retried after its publish landed publishes the same step again) is appended but not counted:
 * the SDK's parser drops the repeat (deduplicateSteps), and a delivery whose last step repeats
 * an earlier one is one it recognises as a retry (checkIfLastOneIsDuplicate), so the list keeps
 * it; counting it would fail a run near its limits for no real step.
 *
 * KEYS[1]  the run (hash; contextBytes: the payload's and the counted steps' body bytes;
 *          repeatedSteps: the steps in the list that were not counted)
 * KEYS[2]  the run's steps (list; the first is the payload)
 * KEYS[3]  the run's counted steps (set of step identities, workflow-message.ts stepIdentity)
 * ARGV[1]  the step as raw step JSON
 * ARGV[2]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * ARGV[3]  the step's body bytes
 * ARGV[4]  the most steps the run may have, its payload not counted
 * ARGV[5]  the largest context the run may have, bytes
 * ARGV[6]  the step's identity
 * Returns {1, body} when appended, {0, the run's state} when not running ('' when unknown),
 * {2, steps so far} over the step count, {3, context bytes so far} over the context size.
 */
export const appendWorkflowStep = new LuaScript(
  'append-workflow-step',
  3,
  `${WORKFLOW_STEPS_BODY_LUA}
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'RUN_STARTED' then return {0, state or ''} end
if redis.call('SISMEMBER', KEYS[3], ARGV[6]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'repeatedSteps', 1)
  return {1, steps_body(KEYS[2], tonumber(ARGV[2]))}
end
local repeated = tonumber(redis.call('HGET', KEYS[1], 'repeatedSteps') or '0')
local steps = redis.call('LLEN', KEYS[2]) - 1 - repeated
if steps >= tonumber(ARGV[4]) then return {2, tostring(steps)} end
local context = tonumber(redis.call('HGET', KEYS[1], 'contextBytes') or '0')
if context + tonumber(ARGV[3]) > tonumber(ARGV[5]) then return {3, tostring(context)} end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('HINCRBY', KEYS[1], 'contextBytes', ARGV[3])
return {1, steps_body(KEYS[2], tonumber(ARGV[2]))}
`,
);
