/**
 * How many events a script run appends between two checks of the cap: a run's first event and
 * every TRIM_EVERY-th after it trim (MAXLEN ~). A run records up to 1,000 events (a cancel's 500
 * messages, two each) or a batch's publishes (up to maxBatchSize, 10,000), so trimming on the
 * first alone let one run overshoot the cap by its whole size.
 */
const TRIM_EVERY = 100;

/**
 * Lua snippet shared by the scripts that change a message's state: appends an event (JSON) to the
 * events stream, capped near `cap` entries, unless recording is off (`cap` 0) or there is none.
 * Checking the cap costs Redis about 0.5 µs of CPU an event (docs/queue.md, Performance), so the
 * others of a run's events are plain XADDs: the stream holds at most TRIM_EVERY - 1 events more
 * than the approximate cap (itself up to one stream node, 100 entries, over), against the cap's
 * floor of 1,000 (QueueBinding limits.maxEvents).
 */
export const RECORD_EVENT_LUA = `
local events_recorded = 0
local function record_event(events, cap, json)
  if tonumber(cap) > 0 and json ~= '' then
    if events_recorded % ${TRIM_EVERY} == 0 then
      redis.call('XADD', events, 'MAXLEN', '~', cap, '*', 'e', json)
    else
      redis.call('XADD', events, '*', 'e', json)
    end
    events_recorded = events_recorded + 1
  end
end
`;
