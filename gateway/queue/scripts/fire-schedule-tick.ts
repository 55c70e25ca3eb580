import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { STORE_MESSAGES_LUA } from './enqueue-messages.js';
import { LuaScript } from './lua-script.js';

/**
 * Fires one tick of a schedule, once: only if the schedule's next tick is still the one the
 * caller read (no other replica fired it, it was not paused, updated or deleted meanwhile), move
 * it to the following tick, record the fired one, and store the tick's messages as a publish
 * stores them (enqueue-messages.ts: the stream and its index, or the delay schedule), each with its
 * CREATED event; a schedule into a queue (Upstash-Queue-Name) appends them to the queue instead,
 * creating it when missing (parallelism 1), and lets the queue start what its slots allow.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the delay schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the schedule ticks sorted set (schedule id -> next tick, ms)
 * KEYS[6]  the schedule last ticks hash (schedule id -> last fired tick, ms)
 * KEYS[7]  the events stream
 * KEYS[8]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[9]  the schedule's queue's waiting list (any key when it has no queue)
 * KEYS[10] the schedule's queue's active set (any key when it has no queue)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the schedule id
 * ARGV[3]  the tick being fired (ms), as read from KEYS[5]
 * ARGV[4]  the following tick (ms)
 * ARGV[5]  the events cap (0: record none)
 * ARGV[6]  the schedule's queue name ('' = none)
 * ARGV[7]  the QueueRecord JSON to create that queue with when it is missing
 * ARGV[8..] quadruples: message id, due time (ms; 0 = now), encoded message, CREATED event (JSON;
 *          '' = none): one, or one per URL group endpoint
 * Returns 1 when fired, 0 when the tick was not (or no longer) due.
 */
export const fireScheduleTick = new LuaScript(
  'fire-schedule-tick',
  10,
  `${STORE_MESSAGES_LUA}${DISPATCH_QUEUE_LUA}
local due = redis.call('ZSCORE', KEYS[5], ARGV[2])
if not due or tonumber(due) ~= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[5], ARGV[4], ARGV[2])
redis.call('HSET', KEYS[6], ARGV[2], ARGV[3])
if ARGV[6] == '' then
  store_messages(KEYS, ARGV[1], ARGV, 8, 4, KEYS[7], ARGV[5])
  return 1
end
if redis.call('HEXISTS', KEYS[8], ARGV[6]) == 0 then redis.call('HSET', KEYS[8], ARGV[6], ARGV[7]) end
for i = 8, #ARGV, 4 do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 2])
  redis.call('RPUSH', KEYS[9], ARGV[i])
  record_event(KEYS[7], ARGV[5], ARGV[i + 3])
end
dispatch_queue(KEYS[8], KEYS[9], KEYS[10], KEYS[4], KEYS[1], KEYS[2], ARGV[1], ARGV[6])
return 1
`,
);
