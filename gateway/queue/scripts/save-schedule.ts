import { DEDUPLICATE_LUA } from './deduplicate.js';
import { LuaScript } from './lua-script.js';
import { QUOTA_EXCEEDED_LUA } from './quota-exceeded.js';
import { SERVER_NOW_LUA } from './server-now.js';

/**
 * Creates or replaces a schedule: its record, its message template and its next tick, together,
 * unless its creation is deduplicated: a create with a deduplication key (Upstash-Deduplication-Id
 * or the content hash) that an earlier create holds within the window changes nothing and answers
 * the earlier schedule's id (checked and recorded in this same step, so concurrent duplicates on
 * any replica create one schedule). A duplicate is answered before any quota is checked, as
 * QStash deduplicates "before the schedule is created": a client retrying a create that went
 * through gets its schedule's id, not a 412.
 *
 * A schedule naming a queue (ARGV[8]) that is missing while the binding has its most queues is
 * refused: its queue is created only at its first tick (fire-schedule-ticks.ts, which checks the
 * quota again then), and it could never be. Checked here, with the save, so the answer matches the
 * queues as they are when the schedule is stored.
 *
 * The schedules quota counts active schedules, as QStash's plans do ("Max Active Schedules"): the
 * unpaused ones, which are exactly the members of the ticks set. A new active schedule is refused
 * while the binding has its most, before its deduplication key is recorded (a refused create holds
 * no key). Replacing a paused schedule keeps it paused (only resume changes that), so a replace
 * never changes the count and is always allowed. A replace keeps the schedule's createdAt, read
 * here rather than by the caller, so replicas replacing it at once cannot overwrite it.
 *
 * KEYS[1]  the schedules hash (id -> record JSON)
 * KEYS[2]  the schedule messages hash (id -> encoded message template)
 * KEYS[3]  the schedule ticks sorted set (id -> next tick, ms; the active schedules)
 * KEYS[4]  the deduplication ids (hash: deduplication key -> first id)
 * KEYS[5]  the deduplication expiries (sorted set: deduplication key -> window end, ms)
 * KEYS[6]  the queues (hash: name -> QueueRecord JSON)
 * ARGV[1]  the schedule id
 * ARGV[2]  the record JSON (its createdAt and, when paused, isPaused are the old record's on a replace)
 * ARGV[3]  the encoded message template
 * ARGV[4]  the next tick (ms), or "" for a paused schedule (not in the ticks set)
 * ARGV[5]  the deduplication key, or "" for none
 * ARGV[6]  the deduplication window, ms
 * ARGV[7]  the most active schedules the binding may have
 * ARGV[8]  the queue the schedule's ticks go to, or "" for none
 * ARGV[9]  the most queues the binding may have
 * Returns {1, ''} when the schedule is new, {0, ''} when it replaced one, {0, first id} when the
 * create was a duplicate and nothing changed; or, with nothing changed, the quota reply
 * (quota-exceeded.ts) QUOTA maxQueues <ARGV[9]> when its queue is missing and the binding has
 * ARGV[9] queues, QUOTA maxSchedules <ARGV[7]> when it is new and active and the binding has
 * ARGV[7] active schedules already.
 */
export const saveSchedule = new LuaScript(
  'save-schedule',
  6,
  `${QUOTA_EXCEEDED_LUA}${DEDUPLICATE_LUA}${SERVER_NOW_LUA}
local now = server_now()
if ARGV[5] ~= '' then
  local first = deduplicated_by(KEYS[4], KEYS[5], ARGV[5], now)
  if first then return {0, first} end
end
if ARGV[8] ~= '' and redis.call('HEXISTS', KEYS[6], ARGV[8]) == 0
  and redis.call('HLEN', KEYS[6]) >= tonumber(ARGV[9]) then
  return quota_exceeded('maxQueues', ARGV[9])
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
local exists = old ~= false
local keep_paused = exists and not redis.call('ZSCORE', KEYS[3], ARGV[1])
if not exists and ARGV[4] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then
  return quota_exceeded('maxSchedules', ARGV[7])
end
if ARGV[5] ~= '' then deduplicate(KEYS[4], KEYS[5], ARGV[5], ARGV[1], now, tonumber(ARGV[6])) end
local record = ARGV[2]
if exists then
  local decoded = cjson.decode(record)
  decoded.createdAt = cjson.decode(old).createdAt
  if keep_paused then decoded.isPaused = true end
  record = cjson.encode(decoded)
end
local created = redis.call('HSET', KEYS[1], ARGV[1], record)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
if keep_paused or ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[1])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
return {created, ''}
`,
);
