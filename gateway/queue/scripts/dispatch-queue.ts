/**
 * Lua snippet shared by queues and flow-control keys, the two "slot groups": `start_waiting(waiting,
 * active, pending, stream, index, field, limit, now)` moves up to `limit` of a group's oldest
 * waiting messages onto the delivery stream, each taking a slot (a member of `active`), and returns
 * how many it moved. A waiting id whose message is gone (cancelled while it waited) is dropped
 * without a slot. Given `now` (a table the first due check fills with the Redis server's clock,
 * ms), it stops at an oldest message whose notBefore (Upstash-Delay, Upstash-Not-Before) has not
 * come: a queue's delayed message keeps its place, and those behind it wait, as FIFO order asks
 * (QStash's queues are FIFO: "The next message will wait..."). Then it also returns, as a second
 * value, how long until that message is due (ms, by the server's clock), so the caller can wake
 * the queue then (queue-wakeups.ts). Flow-control keys pass nil: their delayed messages join the
 * waiting list only once due.
 *
 *   waiting   list: the group's waiting message ids, oldest first
 *   active    set: ids of the group's messages holding a slot
 *   pending   hash: message id -> encoded message, for messages off the stream
 *   stream    the message stream; index: message id -> stream entry id
 */
export const START_WAITING_LUA = `
-- How long until the message is due (ms; 0 or less: due).
local function message_wait(message, now)
  -- The metadata is the encoded message's first line (message-codec.ts); most messages have no
  -- notBefore, and the plain find spares them the JSON decode.
  local line_end = string.find(message, string.char(10), 1, true)
  local metadata = string.sub(message, 1, (line_end or (#message + 1)) - 1)
  if not string.find(metadata, '"notBefore":', 1, true) then return 0 end
  local not_before = tonumber(cjson.decode(metadata).notBefore)
  if not not_before then return 0 end
  if not now[1] then
    local time = redis.call('TIME')
    now[1] = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return not_before - now[1]
end

local function start_waiting(waiting, active, pending, stream, index, field, limit, now)
  local moved = 0
  while moved < limit do
    local id = redis.call('LINDEX', waiting, 0)
    if not id then break end
    local message = redis.call('HGET', pending, id)
    if message and now then
      local wait = message_wait(message, now)
      if wait > 0 then return moved, wait end
    end
    redis.call('LPOP', waiting)
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
 * onto the delivery stream while it holds fewer than `parallelism` of them, is not paused and the
 * oldest is due, and returns how many it moved (and, stopped at a delayed oldest, how long until it
 * is due, as start_waiting). Run inside the script that changed the count, so every replica sees
 * one slot count and a message takes a slot exactly when it reaches the stream. A delayed message
 * that comes due starts at the next dispatch: the replica that enqueued it (or whose audit found it
 * at the head) runs one at its due time (queue-wakeups.ts), and every replica's maintenance pass
 * runs one (the slot audit), so even with that replica gone it is within one poll interval.
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
  return start_waiting(waiting, active, pending, stream, index, field, free, {})
end
`;
