/**
 * Lua snippet shared by the scripts that change a message's state: appends an event (JSON) to the
 * events stream, capped near `cap` entries, unless recording is off (`cap` 0) or there is none.
 * Only a run's first event trims (MAXLEN ~): a run that records many (a read's checks, a pass's
 * completions, a batch's publishes) parsed and checked the cap once per event, about 0.5 µs of
 * Redis's CPU each (docs/queue.md, Performance). The stream may then hold up to one run's events
 * (MAX_CALLS_PER_RUN, 500) more than the approximate cap until the next run trims it, against the
 * cap's floor of 1,000 (QueueBinding limits.maxEvents).
 */
export const RECORD_EVENT_LUA = `
local events_trimmed = false
local function record_event(events, cap, json)
  if tonumber(cap) > 0 and json ~= '' then
    if events_trimmed then
      redis.call('XADD', events, '*', 'e', json)
    else
      redis.call('XADD', events, 'MAXLEN', '~', cap, '*', 'e', json)
      events_trimmed = true
    end
  end
end
`;
