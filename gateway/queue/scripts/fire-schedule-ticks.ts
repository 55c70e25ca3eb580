import { DISPATCH_QUEUE_LUA } from './dispatch-queue.js';
import { STORE_MESSAGES_LUA } from './enqueue-messages.js';
import { LuaScript } from './lua-script.js';

/**
 * Fires ticks the caller claimed (claim-schedule-ticks.ts), each once: a tick fires only if its
 * schedule still holds one of the caller's claims on it (its first claim or a renewal,
 * renew-schedule-claims.ts: no other replica took it over after the claim ran out, it was not
 * paused, replaced or deleted meanwhile). Firing moves the schedule to its following tick, records
 * the fired one and the ids of its messages, and stores the tick's messages as a publish stores them
 * (enqueue-messages.ts: the stream and its index, or the delay schedule), each with its CREATED
 * event. Ticks of schedules into a queue (Upstash-Queue-Name, all of one queue per call) are
 * appended to the queue instead, creating it when missing (parallelism 1), and the queue starts
 * what its slots allow. A missing queue the binding cannot create (it has ARGV[6] queues already,
 * spec.limits.maxQueues) refuses the ticks' messages: each tick is still recorded as fired and
 * moves on (it is not tried again, so it can never fire twice), nothing is stored, and each message
 * leaves a FAILED event saying why instead of its CREATED one. Many ticks per call: one round trip
 * and one script run for all of them.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the delay schedule (sorted set: message id -> due time, ms)
 * KEYS[4]  the scheduled messages (hash: message id -> encoded message)
 * KEYS[5]  the schedule ticks sorted set (schedule id -> next tick or claim, ms)
 * KEYS[6]  the schedule last ticks hash (schedule id -> last fired tick, ms)
 * KEYS[7]  the events stream
 * KEYS[8]  the queues (hash: name -> QueueRecord JSON)
 * KEYS[9]  the ticks' queue's waiting list (any key when they have no queue)
 * KEYS[10] the ticks' queue's active set (any key when they have no queue)
 * KEYS[11] the schedule last messages hash (schedule id -> the fired tick's message ids, joined by ',')
 * KEYS[12] the schedule claims hash (schedule id -> "<claim> <tick>"; claim-schedule-ticks.ts):
 *          a fired schedule's entry is removed, its claim being over
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3]  the ticks' queue name ('' = none)
 * ARGV[4]  the QueueRecord JSON to create that queue with when it is missing
 * ARGV[5]  the claims (ms) the caller's schedules may hold, space-separated (the first and each renewal)
 * ARGV[6]  the most queues the binding may have (spec.limits.maxQueues)
 * ARGV[7]  why a refused tick was not stored: its messages' FAILED events' error
 * ARGV[8..] per tick: schedule id, the tick (ms), the following tick (ms), the number n of its
 *          messages, then n quadruples: message id, due time (ms; 0 = now), encoded message,
 *          CREATED event (JSON; '' = none)
 * Returns, per tick in order, 1 when it fired, 0 when its schedule no longer held the claim, 2 when
 * it fired but its queue could not be created (nothing stored).
 */
export const fireScheduleTicks = new LuaScript(
  'fire-schedule-ticks',
  12,
  `${STORE_MESSAGES_LUA}${DISPATCH_QUEUE_LUA}
local queue = ARGV[3]
local held = {}
for claim in string.gmatch(ARGV[5], '%S+') do held[tonumber(claim)] = true end
local refused = queue ~= '' and redis.call('HEXISTS', KEYS[8], queue) == 0
  and redis.call('HLEN', KEYS[8]) >= tonumber(ARGV[6])
local refusal = '"state":"FAILED","error":' .. cjson.encode(ARGV[7])
local fired = {}
local fired_ids = {}
local any = false
local i = 8
while i <= #ARGV do
  local id, count = ARGV[i], tonumber(ARGV[i + 3])
  local first, last = i + 4, i + 3 + 4 * count
  local score = redis.call('ZSCORE', KEYS[5], id)
  if score and held[tonumber(score)] then
    redis.call('ZADD', KEYS[5], ARGV[i + 2], id)
    redis.call('HSET', KEYS[6], id, ARGV[i + 1])
    local ids = {}
    for m = first, last, 4 do
      ids[#ids + 1] = ARGV[m]
      if refused then
        record_event(KEYS[7], ARGV[2], (string.gsub(ARGV[m + 3], '"state":"CREATED"', refusal, 1)))
      else
        if queue == '' then
          store_message(KEYS, ARGV[1], ARGV[m], ARGV[m + 1], ARGV[m + 2])
        else
          redis.call('HSET', KEYS[4], ARGV[m], ARGV[m + 2])
          redis.call('RPUSH', KEYS[9], ARGV[m])
        end
        record_event(KEYS[7], ARGV[2], ARGV[m + 3])
      end
    end
    redis.call('HSET', KEYS[11], id, table.concat(ids, ','))
    fired_ids[#fired_ids + 1] = id
    fired[#fired + 1] = refused and 2 or 1
    any = not refused
  else
    fired[#fired + 1] = 0
  end
  i = last + 1
end
if #fired_ids > 0 then redis.call('HDEL', KEYS[12], unpack(fired_ids)) end
if any and queue ~= '' then
  if redis.call('HEXISTS', KEYS[8], queue) == 0 then redis.call('HSET', KEYS[8], queue, ARGV[4]) end
  dispatch_queue(KEYS[8], KEYS[9], KEYS[10], KEYS[4], KEYS[1], KEYS[2], ARGV[1], queue)
end
return fired
`,
);
