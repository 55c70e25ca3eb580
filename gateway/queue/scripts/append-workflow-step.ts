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
 *          repeatedSteps: the steps in the list that were not counted; inlineBytes:
 *          workflow-steps-body.ts)
 * KEYS[2]  the run's steps (list; the first is the payload)
 * KEYS[3]  the run's counted steps (set of step identities, workflow-message.ts stepIdentity)
 * ARGV[1]  the step as raw step JSON
 * ARGV[2]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * ARGV[3]  the step's body bytes
 * ARGV[4]  the most steps the run may have, its payload not counted
 * ARGV[5]  the largest context the run may have, bytes
 * ARGV[6]  the step's identity
 * Returns {1, body, the run's createdAt, its config, its payload step or ''} when appended (the
 * payload step, the first of the list, only for a run with a failure callback, which carries the
 * payload), {0, the run's state} when not running ('' when unknown or without its config),
 * {2, steps so far} over the step count, {3, context bytes so far} over the context size. What the
 * step's delivery needs of the run comes back with it: the publish then costs one round trip to
 * Redis, not two.
 */
export const appendWorkflowStep = new LuaScript(
  'append-workflow-step',
  3,
  `${WORKFLOW_STEPS_BODY_LUA}
local run = redis.call('HMGET', KEYS[1], 'state', 'createdAt', 'config', 'repeatedSteps', 'contextBytes')
-- A hash without its config is no run (the store's get reads none there): unknown, not a script
-- error from cjson.decode below.
if not run[3] then return {0, ''} end
if run[1] ~= 'RUN_STARTED' then return {0, run[1] or ''} end
local function appended()
  local payload = ''
  if cjson.decode(run[3]).failureCallback ~= nil then payload = redis.call('LINDEX', KEYS[2], 0) end
  return {1, steps_body(KEYS[1], KEYS[2], tonumber(ARGV[2]), ARGV[1]), run[2], run[3], payload}
end
if redis.call('SISMEMBER', KEYS[3], ARGV[6]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'repeatedSteps', 1)
  return appended()
end
local steps = redis.call('LLEN', KEYS[2]) - 1 - tonumber(run[4] or '0')
if steps >= tonumber(ARGV[4]) then return {2, tostring(steps)} end
local context = tonumber(run[5] or '0')
if context + tonumber(ARGV[3]) > tonumber(ARGV[5]) then return {3, tostring(context)} end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('HINCRBY', KEYS[1], 'contextBytes', ARGV[3])
return appended()
`,
);
