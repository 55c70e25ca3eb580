import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * The binding's mover runs this over every flow-control key at least every 250 ms, several keys
 * per run (one run per key cost a round trip each: 260 ms a pass at 5,000 keys,
 * bench/flow-control-keys.ts). For each key it frees the tokens of messages no longer on the stream
 * (their release never reached Redis: the gateway died between recording the attempt and
 * releasing, or the message was cancelled while no worker held it), moves due delayed messages and
 * retries into the waiting list, and starts what a rolled rate window allows. When the key's counts
 * of unfinished messages by limits (flow-control-limits.ts) do not add up to its messages waiting,
 * due and in flight at two ticks in a row (a path that never decremented: a release the tick beat
 * to the token, a message cancelled while no worker held it, a gateway that died), they are rebuilt
 * from the messages themselves and the key's limits follow. A key left with
 * nothing waiting, due or in flight, neither paused nor pinned, and whose rate window has ended,
 * is forgotten, so keys of the past do not pile up.
 *
 * KEYS[1]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[2]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[3]  the message stream
 * KEYS[4]  the stream index (hash: message id -> stream entry id)
 * KEYS[5..] triples per key, in ARGV's order: its waiting list, its active set, its due set
 *          (sorted set: message id -> due time, ms)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2..] the flow-control keys
 * Returns, per key, {tokens freed, messages started, 1 if the key was forgotten else 0}.
 */
export const tickFlowControl = new LuaScript(
  'tick-flow-control',
  { first: 4, each: 3 },
  `${SERVER_NOW_LUA}${DISPATCH_FLOW_CONTROL_LUA}
local now = server_now()

local function sum(counts)
  local total = 0
  for _, count in pairs(counts or {}) do total = total + count end
  return total
end

local function tick(k, name)
  local freed = 0
  for _, id in ipairs(redis.call('SMEMBERS', k.active)) do
    if redis.call('HEXISTS', k.index, id) == 0 then
      redis.call('SREM', k.active, id)
      freed = freed + 1
    end
  end
  local started = dispatch_flow_control(k, ARGV[1], name, now)
  local raw = redis.call('HGET', k.flows, name)
  if not raw then return {freed, started, 0} end
  local flow = cjson.decode(raw)
  local messages = redis.call('LLEN', k.waiting) + redis.call('SCARD', k.active) + redis.call('ZCARD', k.due)
  local windowOver = flow.rate == 0 or now >= flow.ratePeriodStart + flow.period * 1000
  if messages == 0 and windowOver and not flow.paused and not flow.pinnedParallelism and not flow.pinnedRate then
    redis.call('HDEL', k.flows, name)
    return {freed, started, 1}
  end
  -- The counts must cover every message of the key. One both due and in flight (its retry parked,
  -- its release a moment away) is counted twice here, so a mismatch is only marked at first; one
  -- still there at the next tick is real drift, and the counts are rebuilt (in time with the number
  -- of the key's messages) and the key dispatched again by the limits that follow.
  local counted = sum(flow.parallelismCounts)
  local mismatch = counted ~= messages or sum(flow.rateCounts) ~= counted
  if mismatch and flow.countsDrifted then
    flow.countsDrifted = nil
    recount_flow_limits(k, flow, ARGV[1])
    use_highest_limits(flow)
    redis.call('HSET', k.flows, name, cjson.encode(flow))
    started = started + dispatch_flow_control(k, ARGV[1], name, now)
  elseif mismatch ~= (flow.countsDrifted == true) then
    flow.countsDrifted = mismatch or nil
    redis.call('HSET', k.flows, name, cjson.encode(flow))
  end
  return {freed, started, 0}
end

local results = {}
for i = 2, #ARGV do
  local first = 5 + (i - 2) * 3
  local k = { flows = KEYS[1], pending = KEYS[2], stream = KEYS[3], index = KEYS[4],
              waiting = KEYS[first], active = KEYS[first + 1], due = KEYS[first + 2] }
  results[#results + 1] = tick(k, ARGV[i])
end
return results
`,
);
