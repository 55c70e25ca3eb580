import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Lua snippet: true while stream entry `entry` is on `stream`. A cancel deletes a queued message's
 * entry, also one a worker holds, so a worker checks this before it sends and before it parks a
 * retry or a dead letter: a cancelled message is never delivered again.
 */
export const ENTRY_PRESENT_LUA = `
local function entry_present(stream, entry)
  return #redis.call('XRANGE', stream, entry, entry) > 0
end
`;

/**
 * The check a worker makes just before it sends, as a script so only a count crosses the
 * network, not the message; for each entry that is there, the attempt's ACTIVE event is recorded.
 * One run checks every entry whose check began in the same turn of the event loop (a read's
 * batch under load): the round trip and the script call are paid once for all of them.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the events stream
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2..] pairs: a stream entry id, its ACTIVE event (JSON; '' = none)
 * Returns, per pair, 1 if the entry is there, 0 if it was cancelled or finished by another consumer.
 */
export const entryPresent = new LuaScript(
  'entry-present',
  2,
  `${ENTRY_PRESENT_LUA}${RECORD_EVENT_LUA}
local present = {}
for i = 2, #ARGV, 2 do
  if entry_present(KEYS[1], ARGV[i]) then
    record_event(KEYS[2], ARGV[1], ARGV[i + 1])
    present[#present + 1] = 1
  else
    present[#present + 1] = 0
  end
end
return present
`,
);
