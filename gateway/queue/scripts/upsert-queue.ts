import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';

/**
 * Creates a queue or changes its parallelism and paused flag (QStash's upsert: both are set, its
 * createdAt is kept), then lets it start what a larger parallelism or a resume frees. Messages
 * already holding slots keep them when parallelism shrinks; no new one starts until they finish.
 *
 * KEYS[1]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[2]  the queue's waiting list
 * KEYS[3]  the queue's active set
 * KEYS[4]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[5]  the message stream
 * KEYS[6]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the queue's name
 * ARGV[3]  parallelism ('' = keep the queue's, 1 for a new one)
 * ARGV[4]  paused: '1', '0', or '' = keep the queue's (false for a new one)
 * ARGV[5]  now, epoch ms
 * ARGV[6]  the most queues the binding may have (spec.limits.maxQueues)
 * ARGV[7]  '1' to create the queue when missing, '0' to leave it missing (pause, resume)
 * Returns {1, ms until the oldest waiting message is due when the dispatch stopped at it because
 * it is not (else -1)} when the queue exists afterwards, {0, -1} when it is missing; the quota
 * reply QUOTA maxQueues <ARGV[6]> (quota-exceeded.ts; nothing changed) when creating it would pass
 * the binding's limit.
 */
export const upsertQueue = new LuaScript(
  'upsert-queue',
  6,
  `${QUOTA_EXCEEDED_LUA}${DISPATCH_QUEUE_LUA}
local raw = redis.call('HGET', KEYS[1], ARGV[2])
local now = tonumber(ARGV[5])
local queue
if raw then
  queue = cjson.decode(raw)
else
  if ARGV[7] ~= '1' then return {0, -1} end
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[6]) then
    return quota_exceeded('maxQueues', ARGV[6])
  end
  queue = { createdAt = now, parallelism = 1, paused = false }
end
if ARGV[3] ~= '' then queue.parallelism = tonumber(ARGV[3]) end
if ARGV[4] ~= '' then queue.paused = ARGV[4] == '1' end
queue.updatedAt = now
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(queue))
local _, wait = dispatch_queue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2])
return {1, wait or -1}
`,
);
