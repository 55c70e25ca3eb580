import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Sends dead letters of one queue's messages again, back into that queue (retry-dead-letters.ts
 * sends the others): each letter leaves the dead-letter queue and its new message joins the end
 * of the queue's waiting list in one step, then the queue starts what its free slots allow, so a
 * retry never passes the queue's parallelism. The queue is created (parallelism 1) when it was
 * deleted meanwhile, as an enqueue creates it, within the binding's queue quota.
 *
 * KEYS[1]  the dead letters (hash: dlqId -> JSON)
 * KEYS[2]  the dead-letter order (sorted set of dlqIds, score 0)
 * KEYS[3]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[4]  the queue's waiting list
 * KEYS[5]  the queue's active set
 * KEYS[6]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[7]  the message stream
 * KEYS[8]  the stream index (hash: message id -> stream entry id)
 * KEYS[9]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3]  the queue's name
 * ARGV[4]  the QueueRecord JSON to create the queue with when it is missing
 * ARGV[5]  the most queues the binding may have (spec.limits.maxQueues)
 * ARGV[6..] quadruples: dlqId, new message id, encoded message, CREATED event (JSON; '' = none)
 * Returns {per quadruple, 1 if it was retried or 0 if the dead letter was gone; ms until the
 * oldest waiting message is due when the dispatch stopped at it because it is not (else -1)}; or
 * the quota reply QUOTA maxQueues <ARGV[5]> (quota-exceeded.ts; nothing changed) when the queue is
 * missing and the binding has its most queues.
 */
export const retryDeadLettersIntoQueue = new LuaScript(
  'retry-dead-letters-into-queue',
  9,
  `${QUOTA_EXCEEDED_LUA}${RECORD_EVENT_LUA}${DISPATCH_QUEUE_LUA}
local results = {}
local queue_checked = false
for i = 6, #ARGV, 4 do
  local dlq_id, id, message = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HEXISTS', KEYS[1], dlq_id) == 1 then
    if not queue_checked and redis.call('HEXISTS', KEYS[3], ARGV[3]) == 0 then
      if redis.call('HLEN', KEYS[3]) >= tonumber(ARGV[5]) then
        return quota_exceeded('maxQueues', ARGV[5])
      end
      redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
    end
    queue_checked = true
    redis.call('HDEL', KEYS[1], dlq_id)
    redis.call('ZREM', KEYS[2], dlq_id)
    redis.call('HSET', KEYS[6], id, message)
    redis.call('RPUSH', KEYS[4], id)
    record_event(KEYS[9], ARGV[2], ARGV[i + 3])
    results[#results + 1] = 1
  else
    results[#results + 1] = 0
  end
end
local _, wait = dispatch_queue(KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], ARGV[1], ARGV[3])
return {results, wait or -1}
`,
);
