import { LuaScript } from './lua-script.js';

/**
 * Lua for storing messages, shared by every script that creates messages (a publish, a schedule's
 * tick): `store_messages(keys, field, args, first)` stores the triples of `args` from index
 * `first` on: message id, due time (ms; 0 = now), encoded message. A message due now goes onto
 * the stream (keys[1]) and into the stream index (keys[2]); a delayed one into the schedule
 * (keys[3]) and the scheduled messages (keys[4]) until it is due. Returns the number stored.
 */
export const STORE_MESSAGES_LUA = `
local function store_messages(keys, field, args, first)
  local stored = 0
  for i = first, #args, 3 do
    local id, due, message = args[i], tonumber(args[i + 1]), args[i + 2]
    if due > 0 then
      redis.call('HSET', keys[4], id, message)
      redis.call('ZADD', keys[3], due, id)
    else
      local entry = redis.call('XADD', keys[1], '*', field, message)
      redis.call('HSET', keys[2], id, entry)
    end
    stored = stored + 1
  end
  return stored
end
`;

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
  `${STORE_MESSAGES_LUA}
return store_messages(KEYS, ARGV[1], ARGV, 2)
`,
);
