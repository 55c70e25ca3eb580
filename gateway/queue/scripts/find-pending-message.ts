import { LuaScript } from './lua-script.js';

/**
 * Reads a pending message wherever it is, in one atomic step. A message moves between the
 * stores (waiting off the stream <-> on the stream) in scripts of its own (schedule-retry.ts,
 * promote-due-messages.ts, ...); a read that looked in one store and then the other could fall
 * between two such moves and answer 404 for a message being delivered.
 *
 * KEYS[1]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the message stream
 * ARGV[1]  the message id
 * ARGV[2]  the stream entry field that holds the message
 * Returns {'scheduled', message} or {'queued', message}; nil when it is not pending.
 */
export const findPendingMessage = new LuaScript(
  'find-pending-message',
  3,
  `
local waiting = redis.call('HGET', KEYS[1], ARGV[1])
if waiting then return {'scheduled', waiting} end
local entry = redis.call('HGET', KEYS[2], ARGV[1])
if not entry then return nil end
local found = redis.call('XRANGE', KEYS[3], entry, entry)
if #found == 0 then return nil end
local fields = found[1][2]
for i = 1, #fields, 2 do
  if fields[i] == ARGV[2] then return {'queued', fields[i + 1]} end
end
return nil
`,
);
