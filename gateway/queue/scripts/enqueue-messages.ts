import { DEDUPLICATE_LUA } from './deduplicate.js';
import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Lua for storing messages, shared by every script that creates messages (a publish, a schedule's
 * tick): `store_message(keys, field, id, due, message)` stores one message, due time in ms (0 =
 * now): a message due now goes onto the stream (keys[1]) and into the stream index (keys[2]); a
 * delayed one into the schedule (keys[3]) and the scheduled messages (keys[4]) until it is due.
 * `store_messages(keys, field, args, first, stride, events, cap)` stores the items of `args` from
 * index `first` on, `stride` values each: message id, due time, encoded message, and with a stride
 * of 4 its CREATED event (recorded on the `events` stream under `cap`). Returns the number stored.
 */
export const STORE_MESSAGES_LUA = `${RECORD_EVENT_LUA}
local function store_message(keys, field, id, due, message)
  if tonumber(due) > 0 then
    redis.call('HSET', keys[4], id, message)
    redis.call('ZADD', keys[3], due, id)
  else
    local entry = redis.call('XADD', keys[1], '*', field, message)
    redis.call('HSET', keys[2], id, entry)
  end
end

local function store_messages(keys, field, args, first, stride, events, cap)
  local stored = 0
  for i = first, #args, stride do
    store_message(keys, field, args[i], args[i + 1], args[i + 2])
    if stride > 3 then record_event(events, cap, args[i + 3]) end
    stored = stored + 1
  end
  return stored
end
`;

/**
 * Stores published messages, all or none: a message due now goes onto the stream and into the
 * stream index; a delayed one into the schedule until it is due. Each stored one gets its CREATED
 * event. A message with a deduplication key that an earlier message holds within the window is not
 * stored: its place in the answer is that earlier message's id (one step, so concurrent duplicates
 * on any replica store one).
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the deduplication ids (hash: deduplication key -> first message id)
 * KEYS[6]  the deduplication expiries (sorted set: deduplication key -> window end, ms)
 * KEYS[7]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the deduplication window, ms
 * ARGV[3]  the events cap (0: record none)
 * ARGV[4..] quintuples: message id, due time (ms; 0 = now), encoded message, deduplication key
 *          ('' = none), CREATED event (JSON; '' = none)
 * Returns 0 when every message was stored (no duplicate: the usual case), else, per message, ''
 * when it was stored and the id of the message it duplicates when not. One integer rather than an
 * empty string per message: reading a batch of 100's array of '' took about 4% of the gateway's
 * CPU per batch publish (docs/queue.md, Performance).
 */
export const enqueueMessages = new LuaScript(
  'enqueue-messages',
  7,
  `${STORE_MESSAGES_LUA}${DEDUPLICATE_LUA}${SERVER_NOW_LUA}
local answers = {}
local duplicates = false
local now = nil
for i = 4, #ARGV, 5 do
  local id, due, message, key = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local first = false
  if key ~= '' then
    now = now or server_now()
    first = deduplicate(KEYS[5], KEYS[6], key, id, now, tonumber(ARGV[2]))
  end
  if first then
    answers[#answers + 1] = first
    duplicates = true
  else
    store_message(KEYS, ARGV[1], id, due, message)
    record_event(KEYS[7], ARGV[3], ARGV[i + 4])
    answers[#answers + 1] = ''
  end
end
if not duplicates then return 0 end
return answers
`,
);
