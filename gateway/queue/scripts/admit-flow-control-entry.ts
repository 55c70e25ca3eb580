import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * The check a worker makes just before it sends a flow-control message, in place of
 * entry-present: the one round trip per delivery also admits the message to its key. Only the
 * key's own dispatch gives a token, and a queue's dispatch, a schedule tick or a DLQ retry put a
 * flow-control message on the stream without one (their scripts cannot name the key's Redis keys:
 * every key comes from keys.ts in KEYS). Such an entry is taken off the stream here and waits in
 * its key like a published one, with the message's limits applied to the key (apply_flow_limits);
 * the key's dispatch puts it back on the stream holding a token. A queue's message keeps its
 * queue slot meanwhile: it is in the messages off the stream, which release-queue-slot and
 * audit-queue-slots read as "still in use".
 *
 * KEYS[1..7] as flow_control_keys(1): the flow-control keys, the key's waiting list, active set
 *          and due set, the messages off the stream, the message stream, the stream index
 * KEYS[8]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the consumer group
 * ARGV[3]  the stream entry id
 * ARGV[4]  the flow-control key
 * ARGV[5]  the message id
 * ARGV[6]  the message's limits: parallelism, rate (0 = none) and period (s), as JSON
 * ARGV[7]  the events cap (0: record none)
 * ARGV[8]  the ACTIVE event (JSON)
 * Returns 1 when the message holds a token (deliver it; its ACTIVE event is recorded), 2 when it
 * was admitted to its key instead, 0 when the entry is gone (cancelled, or finished by another
 * consumer).
 */
export const admitFlowControlEntry = new LuaScript(
  'admit-flow-control-entry',
  8,
  `${RECORD_EVENT_LUA}${SERVER_NOW_LUA}${DISPATCH_FLOW_CONTROL_LUA}
local k = flow_control_keys(1)
local entry = redis.call('XRANGE', k.stream, ARGV[3], ARGV[3])[1]
if not entry then return 0 end
local id = ARGV[5]
if redis.call('SISMEMBER', k.active, id) == 1 then
  record_event(KEYS[8], ARGV[7], ARGV[8])
  return 1
end
local fields, message = entry[2], nil
for i = 1, #fields, 2 do
  if fields[i] == ARGV[1] then message = fields[i + 1] end
end
redis.call('HSET', k.pending, id, message)
redis.call('XACK', k.stream, ARGV[2], ARGV[3])
redis.call('XDEL', k.stream, ARGV[3])
if redis.call('HGET', k.index, id) == ARGV[3] then redis.call('HDEL', k.index, id) end
local now = server_now()
apply_flow_limits(k, ARGV[4], now, cjson.decode(ARGV[6]))
redis.call('RPUSH', k.waiting, id)
dispatch_flow_control(k, ARGV[1], ARGV[4], now)
return 2
`,
);
