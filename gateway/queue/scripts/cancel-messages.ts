import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Cancels pending messages by id: a scheduled one (delayed or waiting for a retry) leaves the
 * schedule; a queued one has its stream entry deleted, also when a worker holds it, which that
 * worker sees before it sends (entry-present) or when it records the attempt. Each cancelled
 * message gets its CANCEL_REQUESTED and CANCELLED events, built from its stored metadata line.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the events stream
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2]  now, epoch ms
 * ARGV[3..] the message ids
 * Returns the number of messages cancelled (unknown or finished ids count for nothing).
 */
export const cancelMessages = new LuaScript(
  'cancel-messages',
  5,
  `${RECORD_EVENT_LUA}
local function record_cancel(id, stored)
  if tonumber(ARGV[1]) == 0 then return end
  local url, label = '', nil
  if stored then
    local newline = string.find(stored, '\\n', 1, true)
    local ok, meta = pcall(cjson.decode, string.sub(stored, 1, (newline or 1) - 1))
    if ok and type(meta) == 'table' then
      url = meta.destination or ''
      label = meta.label
    end
  end
  for _, state in ipairs({'CANCEL_REQUESTED', 'CANCELLED'}) do
    record_event(KEYS[5], ARGV[1], cjson.encode({
      time = tonumber(ARGV[2]), state = state, messageId = id, url = url, label = label,
    }))
  end
end

local function entry_message(entry)
  local found = redis.call('XRANGE', KEYS[1], entry, entry)
  if #found == 0 then return nil end
  local fields = found[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'm' then return fields[i + 1] end
  end
  return nil
end

local cancelled = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local scheduled = redis.call('HGET', KEYS[4], id)
  if scheduled then
    redis.call('HDEL', KEYS[4], id)
    redis.call('ZREM', KEYS[3], id)
    record_cancel(id, scheduled)
    cancelled = cancelled + 1
  else
    local entry = redis.call('HGET', KEYS[2], id)
    if entry then
      redis.call('HDEL', KEYS[2], id)
      local stored = entry_message(entry)
      if redis.call('XDEL', KEYS[1], entry) == 1 then
        record_cancel(id, stored)
        cancelled = cancelled + 1
      end
    end
  end
end
return cancelled
`,
);
