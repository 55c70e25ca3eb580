import { DEDUPLICATE_LUA } from './deduplicate.js';
import { LuaScript } from './lua-script.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Stores published messages, all or none: a message due now goes onto the stream and into the
 * stream index; a delayed one into the schedule until it is due. A message with a deduplication
 * key that an earlier message holds within the window is not stored: its place in the answer is
 * that earlier message's id (one step, so concurrent duplicates on any replica store one).
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the deduplication ids (hash: deduplication key -> first message id)
 * KEYS[6]  the deduplication expiries (sorted set: deduplication key -> window end, ms)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the deduplication window, ms
 * ARGV[3..] quadruples: message id, due time (ms; 0 = now), encoded message, deduplication key
 *          ('' = none)
 * Returns, per message, '' when it was stored, else the id of the message it duplicates.
 */
export const enqueueMessages = new LuaScript(
  'enqueue-messages',
  6,
  `${DEDUPLICATE_LUA}${SERVER_NOW_LUA}
local answers = {}
local now = nil
for i = 3, #ARGV, 4 do
  local id, due, message, key = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local first = false
  if key ~= '' then
    now = now or server_now()
    first = deduplicate(KEYS[5], KEYS[6], key, id, now, tonumber(ARGV[2]))
  end
  if first then
    answers[#answers + 1] = first
  elseif due > 0 then
    redis.call('HSET', KEYS[4], id, message)
    redis.call('ZADD', KEYS[3], due, id)
  else
    local entry = redis.call('XADD', KEYS[1], '*', ARGV[1], message)
    redis.call('HSET', KEYS[2], id, entry)
  end
  if not first then answers[#answers + 1] = '' end
end
return answers
`,
);
