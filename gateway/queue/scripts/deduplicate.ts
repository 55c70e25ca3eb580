/**
 * Lua snippet for the scripts that store published messages: `deduplicate(ids, expiries, key,
 * message_id, now, window)` returns the id of the message first stored under deduplication `key`
 * while that is less than `window` ms ago, or false after recording `message_id` under it. Run in
 * the same script as the store, so a message and its deduplication record are written together
 * or not at all, across every gateway replica and concurrent duplicates alike.
 *
 *   ids        hash: deduplication key -> first message id
 *   expiries   sorted set: deduplication key -> when its window ends (ms)
 * Each call also forgets a few keys whose window has ended, so neither grows without bound.
 * `deduplicated_by(ids, expiries, key, now)` is the same answer without recording anything, for a
 * script that must refuse (over a quota) before it records: a key whose window has ended and that
 * is not forgotten yet holds nothing.
 */
export const DEDUPLICATE_LUA = `
local function deduplicated_by(ids, expiries, key, now)
  local first = redis.call('HGET', ids, key)
  if not first then return false end
  local ends = tonumber(redis.call('ZSCORE', expiries, key))
  if ends and ends > now then return first end
  return false
end
local function deduplicate(ids, expiries, key, message_id, now, window)
  local ended = redis.call('ZRANGEBYSCORE', expiries, '-inf', now, 'LIMIT', 0, 8)
  for _, old in ipairs(ended) do
    redis.call('HDEL', ids, old)
    redis.call('ZREM', expiries, old)
  end
  local first = deduplicated_by(ids, expiries, key, now)
  if first then return first end
  redis.call('HSET', ids, key, message_id)
  redis.call('ZADD', expiries, now + window, key)
  return false
end
`;
