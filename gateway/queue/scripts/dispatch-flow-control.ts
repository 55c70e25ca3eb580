import { START_WAITING_LUA } from './dispatch-queue.js';

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
 * missing and `create`), `apply_flow_limits(k, name, now, limits)` makes a new message's limits
 * the key's (creating it; pinned ones stay), `flow_control_keys(first)`
 * names the KEYS from index `first` on in the order below. `now` is the Redis server's
 * clock (server_now), so every replica counts the same windows.
 *
 *   k.flows    hash: key -> FlowControlRecord JSON
 *   k.waiting  list: the key's waiting message ids, oldest first
 *   k.active   set: ids of the key's messages being delivered (one token each)
 *   k.due      sorted set: the key's delayed and retrying message ids -> due time (ms)
 *   k.pending, k.stream, k.index   as start_waiting's
 */
export const DISPATCH_FLOW_CONTROL_LUA = `${START_WAITING_LUA}
local DUE_STEP = 1000

-- The key's record, a new one when missing and create is true, else nil.
local function read_flow_control(k, name, now, create)
  local raw = redis.call('HGET', k.flows, name)
  if raw then return cjson.decode(raw) end
  if not create then return nil end
  return { createdAt = now, parallelism = 0, rate = 0, period = 1, paused = false,
           pinnedParallelism = false, pinnedRate = false, rateCount = 0, ratePeriodStart = 0 }
end

-- A message's limits (parallelism, rate, period) become the key's, except those pinned (QStash:
-- "the processing configuration is updated based on configurations provided by incoming
-- messages"); the key is created when missing. Every path that adds a message to a key applies
-- them here, so the rule is in one place.
local function apply_flow_limits(k, name, now, limits)
  local flow = read_flow_control(k, name, now, true)
  if not flow.pinnedParallelism then flow.parallelism = limits.parallelism end
  if not flow.pinnedRate then
    flow.rate = limits.rate
    flow.period = limits.period
  end
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
