/**
 * Lua snippet shared by queues and flow-control keys, the two "slot groups": `start_waiting(waiting,
 * active, pending, stream, index, field, limit)` moves up to `limit` of a group's oldest waiting
 * messages onto the delivery stream, each taking a slot (a member of `active`), and returns how
 * many it moved. A waiting id whose message is gone (cancelled while it waited) is dropped without
 * a slot.
 *
 *   waiting   list: the group's waiting message ids, oldest first
 *   active    set: ids of the group's messages holding a slot
 *   pending   hash: message id -> encoded message, for messages off the stream
 *   stream    the message stream; index: message id -> stream entry id
 */
export const START_WAITING_LUA = `
local function start_waiting(waiting, active, pending, stream, index, field, limit)
  local moved = 0
  while moved < limit do
    local id = redis.call('LPOP', waiting)
    if not id then break end
    local message = redis.call('HGET', pending, id)
    if message then
      redis.call('HDEL', pending, id)
      local entry = redis.call('XADD', stream, '*', field, message)
      redis.call('HSET', index, id, entry)
      redis.call('SADD', active, id)
      moved = moved + 1
    end
  end
  return moved
end
`;

/**
 * Lua snippet for every script that can free or add a queue's work: `dispatch_queue(queues,
 * waiting, active, pending, stream, index, field, name)` moves the queue's oldest waiting messages
 * onto the delivery stream while it holds fewer than `parallelism` of them and is not paused, and
 * returns how many it moved. Run inside the script that changed the count, so every replica sees
 * one slot count and a message takes a slot exactly when it reaches the stream.
 *
 *   queues    hash: queue name -> QueueRecord JSON (parallelism, paused)
 * (the other arguments as start_waiting's)
 */
export const DISPATCH_QUEUE_LUA = `${START_WAITING_LUA}
local function dispatch_queue(queues, waiting, active, pending, stream, index, field, name)
  local raw = redis.call('HGET', queues, name)
  if not raw then return 0 end
  local queue = cjson.decode(raw)
  if queue.paused then return 0 end
  local free = tonumber(queue.parallelism) - redis.call('SCARD', active)
  return start_waiting(waiting, active, pending, stream, index, field, free)
end
`;
