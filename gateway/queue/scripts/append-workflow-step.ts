import { STORE_MESSAGES_LUA } from './enqueue-messages.js';
import { LuaScript } from './lua-script.js';
import { WORKFLOW_STEPS_BODY_LUA } from './workflow-steps-body.js';

/**
 * Steps of a running workflow run are published (one step, or a parallel group's plan steps,
 * which come in one request): they join the run's steps, and the delivery that carries each gets
 * the steps up to and including it (what the SDK's lazy fetch cuts the list to by message id),
 * taken in the same step so parallel steps published through two replicas at once each see a
 * list in one order. A run that is no longer running takes no step: the SDK, told 400, stops
 * ("Tried to append to a cancelled workflow", workflow-requests.ts). Steps past the run's step
 * count or context size are not appended, none of them (the caller answers 412, which fails the
 * run): the check and the appends are one script, so a step of the run published through another
 * replica at the same moment never leaves a group half stored. The run's context size is counted
 * in its hash as steps join; a run started before the count existed counts from its next step.
 *
 * A step already counted (the SDK sets no deduplication id on a step's publish, so a delivery
 * retried after its publish landed publishes the same step again) is appended but not counted:
 * the SDK's parser drops the repeat (deduplicateSteps), and a delivery whose last step repeats
 * an earlier one is one it recognises as a retry (checkIfLastOneIsDuplicate), so the list keeps
 * it; counting it would fail a run near its limits for no real step. Nor is a request of repeats
 * only checked: a run over a limit lowered in its binding's spec since still takes them.
 *
 * When the caller knows the run's settings (a replica that started the run or appended one of its
 * steps before) it sends each step's delivery with it, all but the body: the script then stores
 * each delivery with its body (the steps so far) and its CREATED event, as enqueue-messages would,
 * so a step costs one script and the steps never travel back through the gateway. The run's
 * creation time and the SHA-1 of its config JSON must be those the deliveries were built from:
 * if not (a run id started again after its run was dropped), nothing is stored and the run's
 * settings are answered as without deliveries.
 *
 * KEYS[1]  the run (hash; contextBytes: the payload's and the counted steps' body bytes;
 *          repeatedSteps: the steps in the list that were not counted; inlineBytes:
 *          workflow-steps-body.ts)
 * KEYS[2]  the run's steps (list; the first is the payload)
 * KEYS[3]  the run's counted steps (set of step identities, workflow-message.ts stepIdentity)
 * KEYS[4]  the message stream        KEYS[5]  the stream index (hash: message id -> entry id)
 * KEYS[6]  the schedule (sorted set) KEYS[7]  the scheduled messages (hash: id -> encoded message)
 * KEYS[8]  the events stream
 * ARGV[1]  the largest delivery body that carries the steps (bytes); longer ones are fetched
 * ARGV[2]  the most steps the run may have, its payload not counted
 * ARGV[3]  the largest context the run may have, bytes
 * ARGV[4]  the run's createdAt the deliveries were built for ('': no deliveries sent)
 * ARGV[5]  the SHA-1 (hex) of the run's config JSON they were built for
 * ARGV[6]  the stream entry field that holds a message
 * ARGV[7]  the events cap (0: record none)
 * ARGV[8..] sevens, one per step in order: the step as raw step JSON, its body bytes, its
 *          identity, then its delivery ('' each when none is sent): message id, due time (ms; 0 =
 *          now), the encoded message up to its body (message-codec.ts: the metadata line and its
 *          newline), CREATED event JSON ('' = none)
 * Returns {4} when appended and the deliveries stored; {1, the run's createdAt, its config, its
 * payload step or '', then each step's delivery body} when appended without them (the payload
 * step, the first of the list, only for a run with a failure callback, which carries the
 * payload); {0, the run's state} when not running ('' when unknown or without its config), {2,
 * steps so far} over the step count, {3, context bytes so far} over the context size. What the
 * steps' deliveries need of the run comes back with them: the publish then costs one round trip
 * to Redis, not two.
 */
export const appendWorkflowStep = new LuaScript(
  'append-workflow-step',
  8,
  `${WORKFLOW_STEPS_BODY_LUA}${STORE_MESSAGES_LUA}
local run = redis.call('HMGET', KEYS[1], 'state', 'createdAt', 'config', 'repeatedSteps', 'contextBytes')
-- A hash without its config is no run (the store's get reads none there): unknown, not a script
-- error from cjson.decode below.
if not run[3] then return {0, ''} end
if run[1] ~= 'RUN_STARTED' then return {0, run[1] or ''} end
-- The steps to count: those the run has not counted, once each (nor twice within the request).
local fresh, seen, count, bytes = {}, {}, 0, 0
for i = 8, #ARGV, 7 do
  local identity = ARGV[i + 2]
  if not seen[identity] and redis.call('SISMEMBER', KEYS[3], identity) == 0 then
    fresh[i], count, bytes = true, count + 1, bytes + tonumber(ARGV[i + 1])
  end
  seen[identity] = true
end
local steps = redis.call('LLEN', KEYS[2]) - 1 - tonumber(run[4] or '0')
-- Only new steps are checked: repeats alone take no room, and a run already over a limit lowered
-- in its binding's spec since must still take a retried delivery's repeats.
if count > 0 and steps + count > tonumber(ARGV[2]) then return {2, tostring(steps)} end
local context = tonumber(run[5] or '0')
if count > 0 and context + bytes > tonumber(ARGV[3]) then return {3, tostring(context)} end
-- The deliveries sent are stored only if built from this run's settings.
local deliver = ARGV[4] ~= '' and ARGV[4] == run[2] and ARGV[5] == redis.sha1hex(run[3])
local answer = {4}
if not deliver then
  local payload = ''
  if cjson.decode(run[3]).failureCallback ~= nil then payload = redis.call('LINDEX', KEYS[2], 0) end
  answer = {1, run[2], run[3], payload}
end
for i = 8, #ARGV, 7 do
  redis.call('RPUSH', KEYS[2], ARGV[i])
  if fresh[i] then
    redis.call('SADD', KEYS[3], ARGV[i + 2])
    redis.call('HINCRBY', KEYS[1], 'contextBytes', ARGV[i + 1])
  else
    redis.call('HINCRBY', KEYS[1], 'repeatedSteps', 1)
  end
  local body = steps_body(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[i])
  if deliver then
    store_message({KEYS[4], KEYS[5], KEYS[6], KEYS[7]}, ARGV[6], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5] .. body)
    record_event(KEYS[8], ARGV[7], ARGV[i + 6])
  else
    answer[#answer + 1] = body
  end
end
return answer
`,
);
