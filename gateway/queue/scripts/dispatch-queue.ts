/**
 * Lua snippet for every script that can free or add a queue's work: `dispatch_queue(queues,
 * waiting, active, pending, stream, index, field, name)` moves the queue's oldest waiting messages
 * onto the delivery stream while it holds fewer than `parallelism` of them and is not paused, and
 * returns how many it moved. Run inside the script that changed the count, so every replica sees
 * one slot count and a message takes a slot exactly when it reaches the stream.
 *
 *   queues    hash: queue name -> QueueRecord JSON (parallelism, paused)
 *   waiting   list: the queue's waiting message ids, oldest first
 *   active    set: ids of the queue's messages holding a slot
 *   pending   hash: message id -> encoded message, for messages off the stream
 *   stream    the message stream; index: message id -> stream entry id
 * A waiting id whose message is gone (cancelled while it waited) is dropped without a slot.
 * A message enqueued with Upstash-Delay or Upstash-Not-Before keeps its place: while the oldest
 * waiting message is not due (Redis server clock), nothing behind it starts either, so the
 * queue's FIFO order holds; every replica's maintenance pass re-runs the dispatch (audit), so it
 * starts within one poll interval of coming due.
 */
export const DISPATCH_QUEUE_LUA = `
local function queue_message_due(message, now)
  -- The metadata is the encoded message's first line (message-codec.ts); most messages have no
  -- notBefore, and the plain find spares them the JSON decode.
  local line_end = string.find(message, string.char(10), 1, true)
  local metadata = string.sub(message, 1, (line_end or (#message + 1)) - 1)
  if not string.find(metadata, '"notBefore":', 1, true) then return true end
  local not_before = tonumber(cjson.decode(metadata).notBefore)
  if not not_before then return true end
  if not now[1] then
    local time = redis.call('TIME')
    now[1] = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return not_before <= now[1]
end

local function dispatch_queue(queues, waiting, active, pending, stream, index, field, name)
  local raw = redis.call('HGET', queues, name)
  if not raw then return 0 end
  local queue = cjson.decode(raw)
  if queue.paused then return 0 end
  local moved = 0
  local now = {}
  local free = tonumber(queue.parallelism) - redis.call('SCARD', active)
  while free > 0 do
    local id = redis.call('LINDEX', waiting, 0)
    if not id then break end
    local message = redis.call('HGET', pending, id)
    if message and not queue_message_due(message, now) then break end
    redis.call('LPOP', waiting)
    if message then
      redis.call('HDEL', pending, id)
      local entry = redis.call('XADD', stream, '*', field, message)
      redis.call('HSET', index, id, entry)
      redis.call('SADD', active, id)
      moved = moved + 1
      free = free - 1
    end
  end
  return moved
end
`;
