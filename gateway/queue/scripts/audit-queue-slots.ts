import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';

/**
 * Frees the slots of a queue's messages that no longer exist: a message is on the stream (in the
 * index) or parked for a retry (in the pending hash) for as long as it holds a slot, so a slot
 * holder found in neither finished without its release reaching Redis (the gateway died between
 * the two writes, or the database restarted). Then the queue starts what it can. Every replica
 * runs it each maintenance pass, so a leaked slot lasts one poll interval.
 *
 * KEYS[1]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[2]  the queue's waiting list
 * KEYS[3]  the queue's active set
 * KEYS[4]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[5]  the message stream
 * KEYS[6]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the queue's name
 * Returns {slots freed, messages started, ms until the oldest waiting message is due when the
 * dispatch stopped at it because it is not (else -1)}.
 */
export const auditQueueSlots = new LuaScript(
  'audit-queue-slots',
  6,
  `${DISPATCH_QUEUE_LUA}
local freed = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if redis.call('HEXISTS', KEYS[6], id) == 0 and redis.call('HEXISTS', KEYS[4], id) == 0 then
    redis.call('SREM', KEYS[3], id)
    freed = freed + 1
  end
end
local started, wait = dispatch_queue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2])
return {freed, started, wait or -1}
`,
);
