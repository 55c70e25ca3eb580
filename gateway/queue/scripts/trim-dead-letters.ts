import { LuaScript } from './lua-script.js';

/**
 * Lua snippet: drops dead letters older than the retention (dlqIds below `floor`) and the oldest
 * beyond `max`, at most `limit` of each per call, so no call scans the queue; repeated calls
 * (each dead-lettering, and every maintenance pass) keep it within bounds.
 */
export const TRIM_DEAD_LETTERS_LUA = `
local function trim_dead_letters(letters, order, floor, max, limit)
  local expired = redis.call('ZRANGEBYLEX', order, '-', '(' .. floor, 'LIMIT', 0, limit)
  for _, id in ipairs(expired) do
    redis.call('HDEL', letters, id)
    redis.call('ZREM', order, id)
  end
  local over = redis.call('ZCARD', order) - max
  if over > 0 then
    local popped = redis.call('ZPOPMIN', order, math.min(over, limit))
    for i = 1, #popped, 2 do redis.call('HDEL', letters, popped[i]) end
  end
  return #expired + math.max(over, 0)
end
`;

/**
 * KEYS[1]  the dead letters (hash: dlqId -> JSON)
 * KEYS[2]  the dead-letter order (sorted set of dlqIds, score 0)
 * ARGV[1]  the retention floor: dlqIds below it are expired
 * ARGV[2]  the most dead letters to keep
 * ARGV[3]  the most to drop per reason in this call
 * Returns how many were over the limits (dropped, up to the per-call bound).
 */
export const trimDeadLetters = new LuaScript(
  'trim-dead-letters',
  2,
  `${TRIM_DEAD_LETTERS_LUA}
return trim_dead_letters(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
`,
);
