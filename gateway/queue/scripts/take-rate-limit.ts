import { SERVER_NOW_LUA } from './server-now.js';
import { LuaScript } from './lua-script.js';

/**
 * Takes `amount` from a binding's fixed-window rate limit, or nothing when that would pass the
 * limit: the window is the Redis server's clock divided by its length, so every gateway replica
 * counts into the same window, and a window that ended counts from zero again.
 *
 * KEYS[1]  the limit's counter (hash: window -> the window's number, used -> taken in it)
 * ARGV[1]  the window's length, ms (1000: a second; 86400000: a UTC day)
 * ARGV[2]  the limit
 * ARGV[3]  the amount to take
 * Returns {taken (1 or 0), used in the window after the call, the window's end (epoch ms), the
 * server's clock when it ran (epoch ms: how long the window has left, free of a replica's skew)}.
 */
export const takeRateLimit = new LuaScript(
  'take-rate-limit',
  1,
  `${SERVER_NOW_LUA}
local length = tonumber(ARGV[1])
local now = server_now()
local window = math.floor(now / length)
local ends = (window + 1) * length
local used = 0
local counted = redis.call('HMGET', KEYS[1], 'window', 'used')
if tonumber(counted[1]) == window then used = tonumber(counted[2]) or 0 end
local amount = tonumber(ARGV[3])
if used + amount > tonumber(ARGV[2]) then return {0, used, ends, now} end
used = used + amount
redis.call('HSET', KEYS[1], 'window', window, 'used', used)
redis.call('PEXPIREAT', KEYS[1], ends)
return {1, used, ends, now}
`,
);
