import { CANCEL_MESSAGE_LUA } from './cancel-messages.js';
import { FLOW_LIMITS_LUA } from './flow-control-limits.js';
import { LuaScript } from './lua-script.js';

/**
 * Cancels pending messages of flow-control keys by id, as cancel-messages does the others: one
 * waiting or due in its key leaves the key's waiting list or due set and its counts of unfinished
 * messages' limits (flow-control-limits.ts), so the key's limits follow at once; one not yet in its
 * key (waiting in a queue, or delayed there, to be admitted by the worker) leaves the schedule and
 * counted nothing; one in flight has
 * its stream entry deleted, and its token and count go back with the release of the worker that
 * holds it (or with the mover's tick when none does). Each cancelled message gets its
 * CANCEL_REQUESTED and CANCELLED events.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[4]  the events stream
 * KEYS[5]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[6]  the schedule (sorted set: message id -> due time, ms)
 * KEYS[7..] pairs per message, in ARGV's order: its key's waiting list, its key's due set
 * ARGV[1]  the events cap (0: record none)
 * ARGV[2..] quintuples: message id, its flow-control key, its limits (JSON: parallelism, rate
 *          (0 = none) and period (s)), CANCEL_REQUESTED event, CANCELLED event (JSON; '' = none)
 * Returns the number of messages cancelled (unknown or finished ids count for nothing).
 */
export const cancelFlowControlMessages = new LuaScript(
  'cancel-flow-control-messages',
  { first: 6, each: 2 },
  `${CANCEL_MESSAGE_LUA}${FLOW_LIMITS_LUA}
local cancelled = 0
for i = 2, #ARGV, 5 do
  local id, name = ARGV[i], ARGV[i + 1]
  local waiting, due = KEYS[7 + (i - 2) / 5 * 2], KEYS[8 + (i - 2) / 5 * 2]
  local where = cancel_message(KEYS[1], KEYS[2], KEYS[3], KEYS[6], KEYS[4], ARGV[1], id, ARGV[i + 3], ARGV[i + 4])
  if where == 'pending' and redis.call('LREM', waiting, 0, id) + redis.call('ZREM', due, id) > 0 then
    leave_flow_key(KEYS[5], name, cjson.decode(ARGV[i + 2]))
  end
  if where then cancelled = cancelled + 1 end
end
return cancelled
`,
);
