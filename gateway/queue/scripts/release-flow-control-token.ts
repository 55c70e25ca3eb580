import { DISPATCH_FLOW_CONTROL_LUA } from './dispatch-flow-control.js';
import { LuaScript } from './lua-script.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * One delivery attempt of a flow-control key's message ended (delivered, retry parked,
 * dead-lettered, cancelled): it gives back its token, as QStash counts only calls whose answer has
 * not come, and the key starts what its limits now allow. Unlike a queue's slot, the token is not
 * kept through a retry: the retry waits in the key's due set and passes the limits again. The
 * token is freed only when the message is off the stream, so a worker that lost its entry to
 * another that is delivering it now does not free that one's token; releasing twice frees one.
 * A message whose token this frees and that is not parked for a retry (its body is not among the
 * messages off the stream) has finished for good: delivered, dead-lettered or cancelled, so it
 * leaves the key's counts of unfinished messages' limits (flow-control-limits.ts). A release the
 * mover's tick beat to the token counts nothing; the tick's recount heals that.
 *
 * KEYS[1]  the flow-control keys (hash: key -> FlowControlRecord JSON)
 * KEYS[2]  the key's waiting list
 * KEYS[3]  the key's active set
 * KEYS[4]  the key's due set (sorted set: message id -> due time, ms)
 * KEYS[5]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[6]  the message stream
 * KEYS[7]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the flow-control key
 * ARGV[3]  the message id
 * ARGV[4]  the message's limits (JSON: parallelism, rate (0 = none) and period (s))
 * Returns the number of messages started.
 */
export const releaseFlowControlToken = new LuaScript(
  'release-flow-control-token',
  7,
  `${SERVER_NOW_LUA}${DISPATCH_FLOW_CONTROL_LUA}
local k = flow_control_keys(1)
if redis.call('HEXISTS', k.index, ARGV[3]) == 0 and redis.call('SREM', k.active, ARGV[3]) == 1
    and redis.call('HEXISTS', k.pending, ARGV[3]) == 0 then
  leave_flow_key(k.flows, ARGV[2], cjson.decode(ARGV[4]))
end
return dispatch_flow_control(k, ARGV[1], ARGV[2], server_now())
`,
);
