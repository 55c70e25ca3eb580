import { DEDUPLICATE_LUA } from './deduplicate.js';
import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';
import { RECORD_EVENT_LUA } from './record-event.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Enqueues messages at the end of one queue, all or none, creating the queue when it is missing
 * (as QStash's /v2/enqueue does), then lets the queue start what its free slots allow. Each stored
 * message gets its CREATED event; one whose deduplication key an earlier message holds within the
 * window is not stored, and its answer is that earlier message's id.
 *
 * KEYS[1]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[2]  the queue's waiting list
 * KEYS[3]  the queue's active set
 * KEYS[4]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[5]  the message stream
 * KEYS[6]  the stream index (hash: message id -> stream entry id)
 * KEYS[7]  the deduplication ids (hash: deduplication key -> first message id)
 * KEYS[8]  the deduplication expiries (sorted set: deduplication key -> window end, ms)
 * KEYS[9]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the deduplication window, ms
 * ARGV[3]  the events cap (0: record none)
 * ARGV[4]  the queue's name
 * ARGV[5]  the QueueRecord JSON to create the queue with when it is missing
 * ARGV[6]  the most queues the binding may have (spec.limits.maxQueues)
 * ARGV[7..] quadruples: message id, encoded message, deduplication key ('' = none), CREATED event
 *          (JSON; '' = none)
 * Returns, per message, '' when it was stored, else the id of the message it duplicates; or the
 * quota reply QUOTA maxQueues <ARGV[6]> (quota-exceeded.ts; nothing changed) when the queue is
 * missing and the binding has its most queues.
 */
export const enqueueQueueMessages = new LuaScript(
  'enqueue-queue-messages',
  9,
  `${QUOTA_EXCEEDED_LUA}${DEDUPLICATE_LUA}${RECORD_EVENT_LUA}${SERVER_NOW_LUA}${DISPATCH_QUEUE_LUA}
if redis.call('HEXISTS', KEYS[1], ARGV[4]) == 0 then
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[6]) then
    return quota_exceeded('maxQueues', ARGV[6])
  end
  redis.call('HSET', KEYS[1], ARGV[4], ARGV[5])
end
local answers = {}
local now = nil
for i = 7, #ARGV, 4 do
  local id, message, key = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local first = false
  if key ~= '' then
    now = now or server_now()
    first = deduplicate(KEYS[7], KEYS[8], key, id, now, tonumber(ARGV[2]))
  end
  if first then
    answers[#answers + 1] = first
  else
    redis.call('HSET', KEYS[4], id, message)
    redis.call('RPUSH', KEYS[2], id)
    record_event(KEYS[9], ARGV[3], ARGV[i + 3])
    answers[#answers + 1] = ''
  end
end
dispatch_queue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[4])
return answers
`,
);
