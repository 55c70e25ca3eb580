import { LuaScript } from './lua-script.js';

/**
 * Stores published messages, all or none: a message due now goes onto the stream and into the
 * stream index; a delayed one into the schedule until it is due.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2..] triples: message id, due time (ms; 0 = now), encoded message
 * Returns the number of messages stored.
 */
export const enqueueMessages = new LuaScript(
  'enqueue-messages',
  4,
  `
local stored = 0
for i = 2, #ARGV, 3 do
  local id, due, message = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  if due > 0 then
    redis.call('HSET', KEYS[4], id, message)
    redis.call('ZADD', KEYS[3], due, id)
  else
    local entry = redis.call('XADD', KEYS[1], '*', ARGV[1], message)
    redis.call('HSET', KEYS[2], id, entry)
  end
  stored = stored + 1
end
return stored
`,
);
