import { LuaScript } from './lua-script.js';

/**
 * Deletes a queue: its record, its slot set and its waiting list, returning the waiting message
 * ids so the caller cancels those messages (recording their events). Messages already started
 * finish their delivery and retries, as a cancel does not reach a delivery on the wire.
 *
 * KEYS[1]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[2]  the queue's waiting list
 * KEYS[3]  the queue's active set
 * ARGV[1]  the queue's name
 * Returns false when there was no such queue, else the waiting ids (possibly none).
 */
export const deleteQueue = new LuaScript(
  'delete-queue',
  3,
  `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return false end
local waiting = redis.call('LRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2], KEYS[3])
return waiting
`,
);
