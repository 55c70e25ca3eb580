import { CANCEL_MESSAGE_LUA } from './cancel-messages.js';
import { FLOW_LIMITS_LUA } from './flow-control-limits.js';
import { LuaScript } from './lua-script.js';

/**
 * Cancels pending messages of flow-control keys by id, as cancel-messages does the others: one
 * waiting or due in its key leaves the key's waiting list or due set and its counts of unfinished
 * messages' limits (flow-control-limits.ts), so the key's limits follow at once; one not yet in its
 * key (waiting in a queue, or delayed there, to be admitted by the worker) leaves the schedule and
 * counted nothing; one in flight has its stream entry deleted, and its token and count go back
 * with the release of the worker that holds it (or with the mover's tick when none does). Each
 * cancelled message gets its CANCEL_REQUESTED and CANCELLED events.
 *
 * A queue's message (or a callback holding its slot) that no worker holds gives its slot back, and
 * its queue then starts what it can (CANCEL_MESSAGE_LUA): one waiting in its key or parked there
 * for a retry, or one on the stream that no worker has read. So does its queue when the message was
 * its oldest waiting one (a delayed one held back those behind it).
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[4]  the events stream
 * KEYS[5]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[6]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[7]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[8..] pairs per message, in ARGV's order: its key's waiting list, its key's due set; then
 *          pairs per message that names a queue, in ARGV's order: that queue's waiting list and
 *          active set
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2]  the stream entry field that holds a message
 * ARGV[3]  the delivery consumer group
 * ARGV[4..] sextuples: message id, its flow-control key, its limits (JSON: parallelism, rate
 *          (0 = none) and period (s)), the queue whose slot it can hold ('' = none),
 *          CANCEL_REQUESTED event, CANCELLED event (JSON; '' = none)
 * Returns {messages cancelled (unknown or finished ids count for nothing), {queue name, ms until
 * its oldest waiting message is due, ...} for each queue whose dispatch stopped at a delayed one}.
 */
export const cancelFlowControlMessages = new LuaScript(
  'cancel-flow-control-messages',
  { first: 7, each: 2 },
  `${CANCEL_MESSAGE_LUA}${FLOW_LIMITS_LUA}
local messages = (#ARGV - 3) / 6
local queue_keys = 8 + messages * 2
local cancelled = 0
for n = 0, messages - 1 do
  local i = 4 + n * 6
  local id, name, queue = ARGV[i], ARGV[i + 1], ARGV[i + 3]
  local waiting, due = KEYS[8 + n * 2], KEYS[9 + n * 2]
  local where = cancel_message(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[4], ARGV[1], ARGV[3], id, ARGV[i + 4], ARGV[i + 5])
  if where == 'pending' and redis.call('LREM', waiting, 0, id) + redis.call('ZREM', due, id) > 0 then
    leave_flow_key(KEYS[5], name, cjson.decode(ARGV[i + 2]))
  end
  if queue ~= '' then
    free_cancelled_slot(where, id, queue, KEYS[queue_keys], KEYS[queue_keys + 1])
    queue_keys = queue_keys + 2
  end
  if where then cancelled = cancelled + 1 end
end
return {cancelled, dispatch_freed_queues(KEYS[7], KEYS[3], KEYS[1], KEYS[2], ARGV[2])}
`,
);
