/**
 * Lua snippet shared by the scripts that change a message's state: appends an event (JSON) to the
 * events stream, capped near `cap` entries, unless recording is off (`cap` 0) or there is none.
 */
export const RECORD_EVENT_LUA = `
local function record_event(events, cap, json)
  if tonumber(cap) > 0 and json ~= '' then
    redis.call('XADD', events, 'MAXLEN', '~', cap, '*', 'e', json)
  end
end
`;
