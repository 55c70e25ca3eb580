import { LuaScript } from './lua-script.js';

/**
 * A delivery succeeded: acknowledge the stream entry and delete it, in one step.
 *
 * KEYS[1]  the message stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * Returns the number of entries deleted (0 if another consumer already finished it).
 */
export const completeDelivery = new LuaScript(
  'complete-delivery',
  1,
  `
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return redis.call('XDEL', KEYS[1], ARGV[2])
`,
);
