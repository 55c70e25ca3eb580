import { LuaScript } from './lua-script.js';

/**
 * Gives back `amount` taken from a fixed-window rate limit by take-rate-limit.ts, when the window
 * it was taken in is still the counter's: a window that has ended since counts from zero already,
 * so there is nothing to give back. Never below zero.
 *
 * KEYS[1]  the limit's counter (hash: window -> the window's number, used -> taken in it)
 * ARGV[1]  the window the amount was taken in (its number, as take-rate-limit.ts counts it)
 * ARGV[2]  the amount to give back
 * Returns used in the window after the call (-1: the window has ended, nothing given back).
 */
export const giveBackRateLimit = new LuaScript(
  'give-back-rate-limit',
  1,
  `
local counted = redis.call('HMGET', KEYS[1], 'window', 'used')
if counted[1] ~= ARGV[1] then return -1 end
local used = math.max(0, (tonumber(counted[2]) or 0) - tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'used', used)
return used
`,
);
