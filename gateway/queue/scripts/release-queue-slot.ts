import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { LuaScript } from './lua-script.js';

/**
 * A queue's message is finished (delivered, dead-lettered or cancelled): it gives back its slot
 * and the queue starts its next waiting messages. The slot is freed only when the message is
 * neither on the stream nor parked for a retry, so a worker that lost its entry to another (which
 * scheduled a retry) does not free a slot still in use; and releasing twice frees one slot.
 *
 * KEYS[1]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[2]  the queue's waiting list
 * KEYS[3]  the queue's active set
 * KEYS[4]  the messages off the stream (hash: message id -> encoded message)
 * KEYS[5]  the message stream
 * KEYS[6]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the queue's name
 * ARGV[3]  the finished message's id
 * Returns {messages started, ms until the oldest waiting message is due when the dispatch stopped
 * at it because it is not (else -1)}.
 */
export const releaseQueueSlot = new LuaScript(
  'release-queue-slot',
  6,
  `${DISPATCH_QUEUE_LUA}
if redis.call('HEXISTS', KEYS[6], ARGV[3]) == 0 and redis.call('HEXISTS', KEYS[4], ARGV[3]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[3])
end
local started, wait = dispatch_queue(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], ARGV[2])
return {started, wait or -1}
`,
);
