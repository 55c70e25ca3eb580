import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Changes a flow-control key as `client.flowControl.*` asks, then lets it start what the change
 * allows:
 *   pause / resume   the paused flag (a paused key starts nothing; its messages wait)
 *   pin              sets the given limits and pins them, so incoming messages no longer change
 *                    them; resets the rate window (QStash: "pinning a configuration resets the
 *                    current state (rate count and period)")
 *   unpin            unpins parallelism and/or rate; they become the highest of the key's
 *                    unfinished messages' (flow-control-limits.ts), or stay when it has none
 *   resetRate        a new rate window starts now, with nothing counted
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
 * ARGV[3]  the change: pause, resume, pin, unpin or resetRate
 * ARGV[4]  pin: parallelism ('' = leave); unpin: '1' to unpin parallelism
 * ARGV[5]  pin: rate ('' = leave); unpin: '1' to unpin rate
 * ARGV[6]  pin: period in seconds ('' = leave)
 * ARGV[7]  '1' to create the key when missing (pause, pin), '0' to leave it missing
 * Returns 1 when the key exists afterwards, 0 when it is missing.
 */
export const updateFlowControl = new LuaScript(
  'update-flow-control',
  7,
  `${SERVER_NOW_LUA}${DISPATCH_FLOW_CONTROL_LUA}
local k = flow_control_keys(1)
local now = server_now()
local flow = read_flow_control(k, ARGV[2], now, ARGV[7] == '1')
if not flow then return 0 end
local change = ARGV[3]
if change == 'pause' then
  flow.paused = true
elseif change == 'resume' then
  flow.paused = false
elseif change == 'pin' then
  if ARGV[4] ~= '' then
    flow.parallelism = tonumber(ARGV[4])
    flow.pinnedParallelism = true
  end
  if ARGV[5] ~= '' then
    flow.rate = tonumber(ARGV[5])
    flow.pinnedRate = true
  end
  if ARGV[6] ~= '' then
    flow.period = tonumber(ARGV[6])
    flow.pinnedRate = true
  end
  flow.rateCount = 0
  flow.ratePeriodStart = now
elseif change == 'unpin' then
  if ARGV[4] == '1' then flow.pinnedParallelism = false end
  if ARGV[5] == '1' then flow.pinnedRate = false end
  use_highest_limits(flow)
elseif change == 'resetRate' then
  flow.rateCount = 0
  flow.ratePeriodStart = now
else
  return redis.error_reply('unknown flow-control change ' .. change)
end
redis.call('HSET', k.flows, ARGV[2], cjson.encode(flow))
dispatch_flow_control(k, ARGV[1], ARGV[2], now)
return 1
`,
);
