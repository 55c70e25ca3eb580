import { LuaScript } from './lua-script.js';

/**
 * Claims up to ARGV[2] of the schedules whose tick has come, for the caller alone: each claimed
 * schedule's score in the ticks set becomes the claim, the time ARGV[3] (always later than the
 * ticks claimed), which no other replica sees as due until then. So replicas split the due ticks between them instead of all
 * racing for each one; the caller fires what it claimed (fire-schedule-ticks.ts, a compare-and-set
 * on the claim), and if it dies first, its claimed ticks come due again when the claim runs out and
 * another replica claims and fires them, once.
 *
 * A claim is never a whole minute, which every cron tick is, so a stale claim cannot match a tick
 * set meanwhile by a replace or a resume; and each claim of one schedule is later than the one
 * before (it is taken at or after that one's time), so a stale claimer's fire never matches.
 *
 * The claim replaces the tick's time in the ticks set, so the claims hash keeps it beside the claim
 * ("<claim> <tick>"): a schedule claimed again after a claim ran out is due at its tick, not at the
 * claim, and fires recording that tick (lastScheduleTime). An entry counts only while its claim is
 * the schedule's score; one left by a pause or a replace (the score became a tick) is replaced at
 * the next claim.
 *
 * KEYS[1]  the schedule ticks sorted set (schedule id -> next tick, or claim, ms)
 * KEYS[2]  the schedule claims hash (schedule id -> "<claim> <tick>", ms)
 * ARGV[1]  now (ms): ticks at or before it are due
 * ARGV[2]  the most ticks to claim
 * ARGV[3]  until when the claim holds (ms)
 * Returns {claimed, claim, next}: claimed = flat {schedule id, tick (ms), ...} earliest first;
 * claim = the score they now hold; next = the earliest score left in the set (a tick or a claim,
 * claims made here included), false when the set is empty.
 */
export const claimScheduleTicks = new LuaScript(
  'claim-schedule-ticks',
  2,
  `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local claim = math.max(tonumber(ARGV[3]), tonumber(ARGV[1]) + 1)
if claim % 60000 == 0 then claim = claim + 1 end
local claim_text = string.format('%d', claim)
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  local held = redis.call('HMGET', KEYS[2], unpack(ids))
  local entries = {}
  for j, id in ipairs(ids) do
    local score = due[2 * j]
    local was, tick = string.match(held[j] or '', '^(%d+) (%d+)$')
    if was and tonumber(was) == tonumber(score) then due[2 * j] = tick end
    redis.call('ZADD', KEYS[1], claim, id)
    entries[#entries + 1] = id
    entries[#entries + 1] = claim_text .. ' ' .. due[2 * j]
  end
  redis.call('HSET', KEYS[2], unpack(entries))
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {due, claim_text, first[2] or false}
`,
);
