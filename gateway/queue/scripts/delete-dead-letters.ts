import { LuaScript } from './lua-script.js';

/**
 * Deletes dead letters by dlqId.
 *
 * KEYS[1]  the dead letters (hash: dlqId -> JSON)
 * KEYS[2]  the dead-letter order (sorted set of dlqIds, score 0)
 * ARGV     the dlqIds
 * Returns how many existed and were deleted.
 */
export const deleteDeadLetters = new LuaScript(
  'delete-dead-letters',
  2,
  `
local deleted = 0
for _, id in ipairs(ARGV) do
  if redis.call('HDEL', KEYS[1], id) == 1 then
    redis.call('ZREM', KEYS[2], id)
    deleted = deleted + 1
  end
end
return deleted
`,
);
