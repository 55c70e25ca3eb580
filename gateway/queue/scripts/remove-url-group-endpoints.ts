import { LuaScript } from './lua-script.js';

/**
 * Removes endpoints from a URL group, matched by URL or by name; a group left with none is
 * deleted, as QStash deletes it.
 *
 * KEYS[1]  the URL group hash (field = group name, value = the group's JSON)
 * ARGV[1]  the group name
 * ARGV[2]  now, epoch ms (the group's updatedAt)
 * ARGV[3]  the endpoints to remove, a JSON array of {url?, name?}
 * Returns the endpoints left (0: the group is gone), or -1 when there is no such group.
 */
export const removeUrlGroupEndpoints = new LuaScript(
  'remove-url-group-endpoints',
  1,
  `
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored then return -1 end
local group = cjson.decode(stored)
local removals = cjson.decode(ARGV[3])
local kept = {}
for _, existing in ipairs(group.endpoints) do
  local remove = false
  for _, r in ipairs(removals) do
    if (r.url ~= nil and r.url == existing.url) or (r.name ~= nil and r.name ~= '' and r.name == existing.name) then
      remove = true
    end
  end
  if not remove then table.insert(kept, existing) end
end
if #kept == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 0
end
group.endpoints = kept
group.updatedAt = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(group))
return #kept
`,
);
