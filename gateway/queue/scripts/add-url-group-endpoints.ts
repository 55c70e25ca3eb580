import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';

/**
 * Adds endpoints to a URL group, creating the group when it is missing (QStash's upsert). An
 * endpoint with the same URL, or the same non-empty name, as one already there replaces it.
 * One script, so concurrent adds from several replicas never lose each other's endpoints.
 *
 * KEYS[1]  the URL group hash (field = group name, value = the group's JSON)
 * ARGV[1]  the group name
 * ARGV[2]  now, epoch ms (createdAt of a new group, updatedAt of every change)
 * ARGV[3]  the endpoints to add, a JSON array of {url, name?}
 * ARGV[4]  the most endpoints a group may have
 * ARGV[5]  the most groups the binding may have
 * Returns the group's endpoint count; or, with nothing written, the quota reply (quota-exceeded.ts)
 * QUOTA maxUrlGroups <ARGV[5]> when the group is new and the binding already has ARGV[5] groups,
 * QUOTA maxUrlGroupEndpoints <ARGV[4]> when the group would have more than ARGV[4] endpoints.
 */
export const addUrlGroupEndpoints = new LuaScript(
  'add-url-group-endpoints',
  1,
  `${QUOTA_EXCEEDED_LUA}
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local now = tonumber(ARGV[2])
local group
if stored then
  group = cjson.decode(stored)
elseif redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then
  return quota_exceeded('maxUrlGroups', ARGV[5])
else
  group = { createdAt = now, endpoints = {} }
end
for _, added in ipairs(cjson.decode(ARGV[3])) do
  local replaced = false
  for i, existing in ipairs(group.endpoints) do
    local sameName = added.name ~= nil and added.name ~= '' and existing.name == added.name
    if existing.url == added.url or sameName then
      group.endpoints[i] = added
      replaced = true
      break
    end
  end
  if not replaced then table.insert(group.endpoints, added) end
end
if #group.endpoints > tonumber(ARGV[4]) then return quota_exceeded('maxUrlGroupEndpoints', ARGV[4]) end
group.updatedAt = now
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(group))
return #group.endpoints
`,
);
