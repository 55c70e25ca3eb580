import { START_WAITING_LUA } from './dispatch-queue.js';
import { FLOW_LIMITS_LUA } from './flow-control-limits.js';

/**
 * Lua snippet for every script that can free or add a flow-control key's work:
 * `dispatch_flow_control(k, field, name, now)` first moves the key's due messages (delayed ones,
 * retries) from `k.due` to the end of its waiting list, then starts waiting messages while the key
 * is not paused, holds fewer than `parallelism` tokens (0 = no limit) and has started fewer than
 * `rate` (0 = no limit) in the current window of `period` seconds. A window that ended starts the
 * next one right after it, so a busy key gets `rate` every period however late the dispatch that
 * rolls it runs; after a whole idle window the next one starts at the dispatch, so an idle key's
 * first messages do not share a window that is nearly over with the next one's. Returns how many
 * it started. `read_flow_control(k, name, now, create)` reads a key's record (a new one when
 * missing and `create`), `apply_flow_limits(k, name, now, limits)` counts one message joining the
 * key with its limits and makes the highest of the key's unfinished messages' limits the key's
 * (creating it; pinned ones stay; flow-control-limits.ts), `flow_control_keys(first)`
 * names the KEYS from index `first` on in the order below. `now` is the Redis server's
 * clock (server_now), so every replica counts the same windows.
 *
 *   k.flows    hash: key -> FlowControlRecord JSON
 *   k.waiting  list: the key's waiting message ids, oldest first
 *   k.active   set: ids of the key's messages being delivered (one token each)
 *   k.due      sorted set: the key's delayed and retrying message ids -> due time (ms)
 *   k.pending, k.stream, k.index   as start_waiting's
 */
export const DISPATCH_FLOW_CONTROL_LUA = `${START_WAITING_LUA}${FLOW_LIMITS_LUA}
local DUE_STEP = 1000

-- The key's record, a new one when missing and create is true, else nil.
local function read_flow_control(k, name, now, create)
  local raw = redis.call('HGET', k.flows, name)
  if raw then return cjson.decode(raw) end
  if not create then return nil end
  return { createdAt = now, parallelism = 0, rate = 0, period = 1, paused = false,
           pinnedParallelism = false, pinnedRate = false, rateCount = 0, ratePeriodStart = 0 }
end

-- One message joins the key (created when missing) with its limits (parallelism, rate, period;
-- 0 = none): the key's limits become the highest among its unfinished messages, except those
-- pinned (flow-control-limits.ts). Every path that adds a message to a key calls this once per
-- message, so the rule and the counts are in one place.
local function apply_flow_limits(k, name, now, limits)
  local flow = read_flow_control(k, name, now, true)
  count_flow_limits(flow, limits, 1)
  use_highest_limits(flow)
  redis.call('HSET', k.flows, name, cjson.encode(flow))
end

local function dispatch_flow_control(k, field, name, now)
  local flow = read_flow_control(k, name, now, false)
  if not flow then return 0 end
  local due = redis.call('ZRANGEBYSCORE', k.due, '-inf', now, 'LIMIT', 0, DUE_STEP)
  for _, id in ipairs(due) do
    redis.call('RPUSH', k.waiting, id)
    redis.call('ZREM', k.due, id)
  end
  if flow.paused then return 0 end
  local limit = redis.call('LLEN', k.waiting)
  if limit == 0 then return 0 end
  if flow.parallelism > 0 then
    limit = math.min(limit, flow.parallelism - redis.call('SCARD', k.active))
  end
  local rated = flow.rate > 0
  if rated then
    local period = flow.period * 1000
    if now >= flow.ratePeriodStart + 2 * period then
      flow.ratePeriodStart = now
      flow.rateCount = 0
    elseif now >= flow.ratePeriodStart + period then
      flow.ratePeriodStart = flow.ratePeriodStart + period
      flow.rateCount = 0
    end
    limit = math.min(limit, flow.rate - flow.rateCount)
  end
  local started = 0
  if limit > 0 then
    started = start_waiting(k.waiting, k.active, k.pending, k.stream, k.index, field, limit)
  end
  if rated then
    flow.rateCount = flow.rateCount + started
    redis.call('HSET', k.flows, name, cjson.encode(flow))
  end
  return started
end

local function flow_control_keys(first)
  return {
    flows = KEYS[first], waiting = KEYS[first + 1], active = KEYS[first + 2], due = KEYS[first + 3],
    pending = KEYS[first + 4], stream = KEYS[first + 5], index = KEYS[first + 6]
  }
end
`;
