import { DEDUPLICATE_LUA } from './deduplicate.js';
import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Lua for storing one message of a flow-control key, shared with act-on-workflow-letter:
 * `store_flow_control_message(k, key, now, id, due, message, limits)` (k: flow_control_keys) puts
 * it in the key's list, or in its due set while `due` is after `now`, its body in the messages off
 * the stream, and joins it to the key with its `limits` (a table). The caller dispatches the key
 * after (dispatch_flow_control), once its messages are stored.
 */
export const STORE_FLOW_CONTROL_MESSAGE_LUA = `${DISPATCH_FLOW_CONTROL_LUA}
local function store_flow_control_message(k, key, now, id, due, message, limits)
  redis.call('HSET', k.pending, id, message)
  if due > now then
    redis.call('ZADD', k.due, due, id)
  else
    redis.call('RPUSH', k.waiting, id)
  end
  apply_flow_limits(k, key, now, limits)
end
`;

/**
 * Stores messages of one flow-control key, all or none: each waits in the key's list (or, when
 * delayed, in its due set), its body in the messages off the stream, so the messages API finds
 * and cancels it. The key is created when missing and each stored message joins it with its own
 * limits (apply_flow_limits: the key runs by the highest of its unfinished messages'). Then the key starts what its limits allow. Deduplication and CREATED
 * events as in enqueue-messages.
 *
 * KEYS[1]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[2]  the key's waiting list
 * KEYS[3]  the key's active set
 * KEYS[4]  the key's due set (sorted set: message id -> due time, ms)
 * KEYS[5]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[6]  the message stream
 * KEYS[7]  the stream index (hash: message id -> stream entry id)
 * KEYS[8]  the deduplication ids (hash: deduplication key -> first message id)
 * KEYS[9]  the deduplication expiries (sorted set: deduplication key -> window end, ms)
 * KEYS[10] the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the deduplication window, ms
 * ARGV[3]  the events cap (0: record none)
 * ARGV[4]  the flow-control key
 * ARGV[5..] sextuples: message id, due time (ms; 0 = now), encoded message, deduplication key
 *          ('' = none), CREATED event (JSON; '' = none), the message's limits (JSON: parallelism,
 *          rate (0 = none) and period (s))
 * Returns, per message, '' when it was stored, else the id of the message it duplicates.
 */
export const enqueueFlowControlMessages = new LuaScript(
  'enqueue-flow-control-messages',
  10,
  `${DEDUPLICATE_LUA}${RECORD_EVENT_LUA}${SERVER_NOW_LUA}${STORE_FLOW_CONTROL_MESSAGE_LUA}
local k = flow_control_keys(1)
local now = server_now()
local answers = {}
for i = 5, #ARGV, 6 do
  local id, due, message, key = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local first = false
  if key ~= '' then first = deduplicate(KEYS[8], KEYS[9], key, id, now, tonumber(ARGV[2])) end
  if first then
    answers[#answers + 1] = first
  else
    store_flow_control_message(k, ARGV[4], now, id, due, message, cjson.decode(ARGV[i + 5]))
    record_event(KEYS[10], ARGV[3], ARGV[i + 4])
    answers[#answers + 1] = ''
  end
end
dispatch_flow_control(k, ARGV[1], ARGV[4], now)
return answers
`,
);
