/** Lua snippet: `server_now()`, the Redis server's clock in ms, one clock for every replica. */
export const SERVER_NOW_LUA = `
local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
`;
