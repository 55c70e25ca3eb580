import { LuaScript } from './lua-script.js';

/**
 * Renews a ticker's claim on ticks it is still firing (claim-schedule-ticks.ts), as a lock is
 * renewed by its holder's heartbeat: each listed schedule that still holds one of the caller's
 * claims takes the new claim, so no other replica sees it as due until that runs out. A schedule
 * that fired meanwhile (its score is its next tick), was paused, replaced or deleted, or was
 * claimed by another replica after the caller's claim ran out, holds none of them and is left as it
 * is. The caller computes the new claim (later than every claim it held, never a whole minute) and
 * fires with every claim it held (fire-schedule-ticks.ts), so a fire run sent before the renewal
 * still matches. The claims hash follows, so the tick stays known under the new claim.
 *
 * KEYS[1]  the schedule ticks sorted set (schedule id -> next tick, or claim, ms)
 * KEYS[2]  the schedule claims hash (schedule id -> "<claim> <tick>", ms; claim-schedule-ticks.ts)
 * ARGV[1]  the new claim (ms)
 * ARGV[2]  the claims the caller held on these ticks, space-separated
 * ARGV[3..] the schedule ids
 * Returns how many were renewed.
 */
export const renewScheduleClaims = new LuaScript(
  'renew-schedule-claims',
  2,
  `
local held = {}
for claim in string.gmatch(ARGV[2], '%S+') do held[tonumber(claim)] = true end
local renewed = 0
for i = 3, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and held[tonumber(score)] then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i])
    local was, tick = string.match(redis.call('HGET', KEYS[2], ARGV[i]) or '', '^(%d+) (%d+)$')
    if was and tonumber(was) == tonumber(score) then
      redis.call('HSET', KEYS[2], ARGV[i], ARGV[1] .. ' ' .. tick)
    end
    renewed = renewed + 1
  end
end
return renewed
`,
);
