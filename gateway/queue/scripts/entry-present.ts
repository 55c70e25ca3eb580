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
 * network, not the message; when the entry is there, the attempt's ACTIVE event is recorded.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the events stream
 * ARGV[1]  the stream entry id
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3]  the ACTIVE event (JSON)
 * Returns 1 if the entry is there, 0 if it was cancelled or finished by another consumer.
 */
export const entryPresent = new LuaScript(
  'entry-present',
  2,
  `${ENTRY_PRESENT_LUA}${RECORD_EVENT_LUA}
if not entry_present(KEYS[1], ARGV[1]) then return 0 end
record_event(KEYS[2], ARGV[2], ARGV[3])
return 1
`,
);
