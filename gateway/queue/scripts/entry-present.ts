import { LuaScript } from './lua-script.js';

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
 * network, not the message.
 *
 * KEYS[1]  the message stream
 * ARGV[1]  the stream entry id
 * Returns 1 if the entry is there, 0 if it was cancelled or finished by another consumer.
 */
export const entryPresent = new LuaScript(
  'entry-present',
  1,
  `${ENTRY_PRESENT_LUA}
if entry_present(KEYS[1], ARGV[1]) then return 1 end
return 0
`,
);
