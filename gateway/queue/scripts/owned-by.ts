/**
 * Lua snippet shared by the scripts that act on a failed delivery: true when the stream entry
 * ARGV[2] is still pending on consumer ARGV[3]. A consumer whose entry was reclaimed by another
 * (it took longer than the reclaim idle time) must not schedule a second retry of it.
 */
export const OWNED_BY_LUA = `
local function owned_by(stream, group, entry, consumer)
  local pending = redis.call('XPENDING', stream, group, entry, entry, 1)
  return pending[1] ~= nil and pending[1][2] == consumer
end
`;
