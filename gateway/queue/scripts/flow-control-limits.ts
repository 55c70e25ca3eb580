/**
 * Lua snippet: a flow-control key's limits are the highest among its unfinished messages (QStash:
 * "rate/period and parallelism info are kept on each publish separately... During the period that
 * old publishes has not delivered but there are also the publishes with the new rates, QStash will
 * effectively allow the highest rate/period or highest parallelism"). The key's record counts its
 * unfinished messages (waiting, due, in flight) per parallelism (`parallelismCounts`: "3" -> n,
 * "0" = no limit) and per rate/period (`rateCounts`: "10/60" -> n, "0" = no limit):
 *
 *   count_flow_limits(flow, limits, step)   adds (step 1) or removes (step -1) one message's limits
 *                                           ({parallelism, rate, period}; 0 = none, period in s)
 *   use_highest_limits(flow)                sets flow.parallelism, rate and period to the highest
 *                                           counted, except pinned ones ("While pinned, the system
 *                                           ignores configurations provided by incoming messages");
 *                                           with nothing counted the limits stay as they are
 *   leave_flow_key(flows, name, limits)     one message of the key finished for good
 *   message_flow_limits(encoded)            the limits an encoded message (message-codec.ts) carries
 *   recount_flow_limits(k, flow, field)     rebuilds the counts from the key's messages themselves
 *                                           (the mover's self-heal), dropping the ids of cancelled
 *                                           messages left in its waiting list and due set
 *
 * "Highest": no limit is higher than any limit; otherwise the larger parallelism, and the rate
 * with more calls per second (rate / period), a tie going to the larger rate (the longer window
 * allows the larger burst).
 */
export const FLOW_LIMITS_LUA = `
local function rate_tag(limits)
  if limits.rate == 0 then return '0' end
  return limits.rate .. '/' .. limits.period
end

local function add_count(counts, tag, step)
  local count = (counts[tag] or 0) + step
  if count > 0 then counts[tag] = count else counts[tag] = nil end
end

local function count_flow_limits(flow, limits, step)
  flow.parallelismCounts = flow.parallelismCounts or {}
  flow.rateCounts = flow.rateCounts or {}
  add_count(flow.parallelismCounts, tostring(limits.parallelism), step)
  add_count(flow.rateCounts, rate_tag(limits), step)
end

-- Whether rate/period (0 = no limit) allows more than best_rate/best_period (nil = nothing yet).
local function higher_rate(rate, period, best_rate, best_period)
  if best_rate == nil then return true end
  if best_rate == 0 then return false end
  if rate == 0 then return true end
  local mine, theirs = rate * best_period, best_rate * period
  return mine > theirs or (mine == theirs and rate > best_rate)
end

local function use_highest_limits(flow)
  if not flow.pinnedParallelism then
    local best = nil
    for tag in pairs(flow.parallelismCounts or {}) do
      local parallelism = tonumber(tag)
      if best == nil or parallelism == 0 or (best ~= 0 and parallelism > best) then best = parallelism end
    end
    if best ~= nil then flow.parallelism = best end
  end
  if not flow.pinnedRate then
    local best_rate, best_period = nil, nil
    for tag in pairs(flow.rateCounts or {}) do
      local rate, period = 0, 1
      local slash = string.find(tag, '/', 1, true)
      if slash then rate, period = tonumber(string.sub(tag, 1, slash - 1)), tonumber(string.sub(tag, slash + 1)) end
      if higher_rate(rate, period, best_rate, best_period) then best_rate, best_period = rate, period end
    end
    if best_rate ~= nil then flow.rate, flow.period = best_rate, best_period end
  end
end

local function leave_flow_key(flows, name, limits)
  local raw = redis.call('HGET', flows, name)
  if not raw then return end
  local flow = cjson.decode(raw)
  count_flow_limits(flow, limits, -1)
  use_highest_limits(flow)
  redis.call('HSET', flows, name, cjson.encode(flow))
end

local function message_flow_limits(encoded)
  local line_end = string.find(encoded, string.char(10), 1, true)
  if not line_end then return nil end
  local ok, metadata = pcall(cjson.decode, string.sub(encoded, 1, line_end - 1))
  if not ok or type(metadata) ~= 'table' or type(metadata.flowControl) ~= 'table' then return nil end
  local limits = metadata.flowControl
  return { parallelism = tonumber(limits.parallelism) or 0, rate = tonumber(limits.rate) or 0,
           period = tonumber(limits.periodSeconds) or 1 }
end

local function recount_flow_limits(k, flow, field)
  flow.parallelismCounts = {}
  flow.rateCounts = {}
  local seen = {}
  local function count(id, encoded)
    if seen[id] then return end
    seen[id] = true
    local limits = message_flow_limits(encoded)
    if limits then count_flow_limits(flow, limits, 1) end
  end
  for _, id in ipairs(redis.call('LRANGE', k.waiting, 0, -1)) do
    local encoded = redis.call('HGET', k.pending, id)
    if encoded then count(id, encoded) else redis.call('LREM', k.waiting, 0, id) end
  end
  for _, id in ipairs(redis.call('ZRANGE', k.due, 0, -1)) do
    local encoded = redis.call('HGET', k.pending, id)
    if encoded then count(id, encoded) else redis.call('ZREM', k.due, id) end
  end
  for _, id in ipairs(redis.call('SMEMBERS', k.active)) do
    local entry = redis.call('HGET', k.index, id)
    local found = entry and redis.call('XRANGE', k.stream, entry, entry)[1]
    if found then
      local fields = found[2]
      for i = 1, #fields, 2 do
        if fields[i] == field then count(id, fields[i + 1]) end
      end
    end
  end
end
`;
