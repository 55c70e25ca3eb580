import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * The binding's mover runs this for every flow-control key at least every 250 ms: it frees the
 * tokens of messages no longer on the stream (their release never reached Redis: the gateway died
 * between recording the attempt and releasing, or the message was cancelled while no worker held
 * it), moves due delayed messages and retries into the waiting list, and starts what a rolled rate
 * window allows. A key left with nothing waiting, due or in flight, neither paused nor pinned, and
 * whose rate window has ended, is forgotten, so keys of the past do not pile up.
 *
 * KEYS[1]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[2]  the key's waiting list
 * KEYS[3]  the key's active set
 * KEYS[4]  the key's due set (sorted set: message id -> due time, ms)
 * KEYS[5]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[6]  the message stream
 * KEYS[7]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the flow-control key
 * Returns {tokens freed, messages started, 1 if the key was forgotten else 0}.
 */
export const tickFlowControl = new LuaScript(
  'tick-flow-control',
  7,
  `${SERVER_NOW_LUA}${DISPATCH_FLOW_CONTROL_LUA}
local k = flow_control_keys(1)
local now = server_now()
local freed = 0
for _, id in ipairs(redis.call('SMEMBERS', k.active)) do
  if redis.call('HEXISTS', k.index, id) == 0 then
    redis.call('SREM', k.active, id)
    freed = freed + 1
  end
end
local started = dispatch_flow_control(k, ARGV[1], ARGV[2], now)
local raw = redis.call('HGET', k.flows, ARGV[2])
if not raw then return {freed, started, 0} end
local flow = cjson.decode(raw)
local idle = redis.call('LLEN', k.waiting) + redis.call('SCARD', k.active) + redis.call('ZCARD', k.due) == 0
local windowOver = flow.rate == 0 or now >= flow.ratePeriodStart + flow.period * 1000
if idle and windowOver and not flow.paused and not flow.pinnedParallelism and not flow.pinnedRate then
  redis.call('HDEL', k.flows, ARGV[2])
  return {freed, started, 1}
end
return {freed, started, 0}
`,
);
