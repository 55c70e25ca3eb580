import { LuaScript } from './lua-script.js';

/**
 * Removes a consumer from the group only if it holds no pending entry: XGROUP DELCONSUMER drops a
 * consumer's pending entries with it, which would lose those messages.
 *
 * KEYS[1]  the message stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the consumer
 * Returns 1 if removed, 0 if it held entries.
 */
export const removeIdleConsumer = new LuaScript(
  'remove-idle-consumer',
  1,
  `
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #pending > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
`,
);
