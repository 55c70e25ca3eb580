import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Lua snippet shared by the cancel scripts.
 *
 * `cancel_message(stream, index, pending, schedule, events, cap, group, id, requested, cancelled)`
 * cancels one message. One off the stream (delayed, waiting for a retry, or waiting in a queue or
 * a flow-control key) leaves `pending` and `schedule`; one on the stream has its entry deleted,
 * also when a worker holds it, which that worker sees before it sends (entry-present) or when it
 * records the attempt. Records the CANCEL_REQUESTED and CANCELLED events of a cancelled message,
 * and returns where it was: 'pending', 'read' (on the stream, handed to a worker of `group`), or
 * 'unread' (on the stream, never handed out: deleted now, no worker ever will be), or false for an
 * unknown or finished id. What else holds the message (a queue's or a key's lists) is the caller's
 * to clear.
 *
 * `free_cancelled_slot(where, id, queue, waiting, active)` then gives back the slot of `queue` (its
 * waiting list and active set) that the cancelled message held, when no worker holds the message:
 * off the stream (parked for a retry, or waiting in its flow-control key) or never read. Only the
 * slot audit, one poll interval later, would free it otherwise; a worker that read the message
 * releases the slot itself when it finds it gone. Off the stream in its queue's list, a message
 * holds no slot, and nothing is freed; but when it is the oldest there (a delayed one holds back
 * every message behind it, possibly for days), its queue is marked for the dispatch too, which
 * drops the gone id and starts the next (or reports the next delayed oldest, to be woken then).
 *
 * `dispatch_freed_queues(queues, pending, stream, index, field)` runs, after every cancel of the
 * run (so a message cancelled in the same run is never started), the dispatch of each queue that
 * got a slot back or lost its oldest waiting message, and returns `{queue, ms until its oldest waiting message is due, ...}` for each
 * one whose dispatch stopped at a delayed message, for the caller to wake it then.
 */
export const CANCEL_MESSAGE_LUA = `${RECORD_EVENT_LUA}${DISPATCH_QUEUE_LUA}
local function cancel_message(stream, index, pending, schedule, events, cap, group, id, requested, cancelled)
  local where = false
  if redis.call('HDEL', pending, id) == 1 then
    redis.call('ZREM', schedule, id)
    where = 'pending'
  else
    local entry = redis.call('HGET', index, id)
    if entry then
      redis.call('HDEL', index, id)
      -- Asked before the XDEL; with no group yet, no worker has read anything.
      local handed = redis.pcall('XPENDING', stream, group, entry, entry, 1)
      local read = type(handed) == 'table' and not handed.err and #handed > 0
      if redis.call('XDEL', stream, entry) == 1 then where = read and 'read' or 'unread' end
    end
  end
  if where then
    record_event(events, cap, requested)
    record_event(events, cap, cancelled)
  end
  return where
end

local freed_queues = {order = {}, keys = {}}
local function free_cancelled_slot(where, id, queue, waiting, active)
  local freed = (where == 'pending' or where == 'unread') and redis.call('SREM', active, id) == 1
  -- The oldest waiting message holds no slot, but a delayed one holds back all behind it.
  local oldest = where == 'pending' and redis.call('LINDEX', waiting, 0) == id
  if (freed or oldest) and not freed_queues.keys[queue] then
    freed_queues.keys[queue] = {waiting, active}
    table.insert(freed_queues.order, queue)
  end
end

local function dispatch_freed_queues(queues, pending, stream, index, field)
  local waits = {}
  for _, queue in ipairs(freed_queues.order) do
    local keys = freed_queues.keys[queue]
    local _, wait = dispatch_queue(queues, keys[1], keys[2], pending, stream, index, field, queue)
    if wait then
      table.insert(waits, queue)
      table.insert(waits, wait)
    end
  end
  return waits
end
`;

/**
 * Cancels pending messages by id: a scheduled one (delayed or waiting for a retry) leaves the
 * schedule; a queued one has its stream entry deleted, also when a worker holds it, which that
 * worker sees before it sends (entry-present) or when it records the attempt. Each cancelled
 * message gets its CANCEL_REQUESTED and CANCELLED events (built by the caller from the message).
 * A queue's message (or a callback holding its slot) that no worker holds gives its slot back, and
 * its queue then starts what it can (CANCEL_MESSAGE_LUA), as it does when the cancelled message
 * was its oldest waiting one (a delayed one held back those behind it).
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the events stream
 * KEYS[6]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[7..] pairs per message that names a queue, in ARGV's order: that queue's waiting list and
 *          active set (none when no message does)
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2]  the stream entry field that holds a message
 * ARGV[3]  the delivery consumer group
 * ARGV[4..] quadruples: message id, the queue whose slot it can hold ('' = none), CANCEL_REQUESTED
 *          event, CANCELLED event (JSON; '' = none)
 * Returns {messages cancelled (unknown or finished ids count for nothing), {queue name, ms until
 * its oldest waiting message is due, ...} for each queue whose dispatch stopped at a delayed one}.
 */
export const cancelMessages = new LuaScript(
  'cancel-messages',
  { first: 6, each: 2, groupsOptional: true },
  `${CANCEL_MESSAGE_LUA}
local cancelled, queue_keys = 0, 7
for i = 4, #ARGV, 4 do
  local id, queue = ARGV[i], ARGV[i + 1]
  local where = cancel_message(KEYS[1], KEYS[2], KEYS[4], KEYS[3], KEYS[5], ARGV[1], ARGV[3], id, ARGV[i + 2], ARGV[i + 3])
  if queue ~= '' then
    free_cancelled_slot(where, id, queue, KEYS[queue_keys], KEYS[queue_keys + 1])
    queue_keys = queue_keys + 2
  end
  if where then cancelled = cancelled + 1 end
end
return {cancelled, dispatch_freed_queues(KEYS[6], KEYS[4], KEYS[1], KEYS[2], ARGV[2])}
`,
);
