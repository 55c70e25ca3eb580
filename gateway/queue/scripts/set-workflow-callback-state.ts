import { LuaScript } from './lua-script.js';

/**
 * A failed workflow run's failure callback moves on: published (CALLBACK_INPROGRESS), delivered
 * (CALLBACK_SUCCESS) or dead-lettered itself (CALLBACK_FAIL, with its dlqId, which
 * client.dlq.retryFailureFunction sends again, keeping the message id it is sent again as, which
 * DELETE /v2/workflows/dlq/callback/{dlqId} cancels: CALLBACK_CANCELED). The callback is stored before its run is marked
 * failed, so another worker may deliver it first: the published state is set only when no later
 * one is there, and an outcome is kept whatever the run's state. A callback that outlives its
 * run's retention recreates nothing.
 *
 * KEYS[1]  the run (hash)
 * ARGV[1]  the state
 * ARGV[2]  the callback's dlqId ('' for none: any earlier one is dropped)
 * ARGV[3]  '1': set only if the run has no callback state yet (the published state)
 * ARGV[4]  a dlqId: set only if the run's callback is still the failed one with it (the claim of
 *          client.dlq.retryFailureFunction, so two retries send it once); '' for no condition
 * ARGV[5]  the message id the callback is sent again as ('' for none: any earlier one is dropped)
 * ARGV[6]  a message id: set only if the run's callback is in progress as that message (a cancel
 *          of it); '' for no condition
 * Returns 1 if it set the state, 0 if not (unknown run, a state already there, or not that
 * failure or message).
 */
export const setWorkflowCallbackState = new LuaScript(
  'set-workflow-callback-state',
  1,
  `
if redis.call('HEXISTS', KEYS[1], 'state') == 0 then return 0 end
if ARGV[3] == '1' and redis.call('HEXISTS', KEYS[1], 'callbackState') == 1 then return 0 end
if ARGV[4] ~= '' and (redis.call('HGET', KEYS[1], 'callbackState') ~= 'CALLBACK_FAIL'
  or redis.call('HGET', KEYS[1], 'callbackDlqId') ~= ARGV[4]) then return 0 end
if ARGV[6] ~= '' and (redis.call('HGET', KEYS[1], 'callbackState') ~= 'CALLBACK_INPROGRESS'
  or redis.call('HGET', KEYS[1], 'callbackMessageId') ~= ARGV[6]) then return 0 end
redis.call('HSET', KEYS[1], 'callbackState', ARGV[1])
local function keep(field, value)
  if value == '' then redis.call('HDEL', KEYS[1], field) else redis.call('HSET', KEYS[1], field, value) end
end
keep('callbackDlqId', ARGV[2])
keep('callbackMessageId', ARGV[5])
return 1
`,
);
