import { LuaScript } from './lua-script.js';

/**
 * A delivery succeeded (or its message was cancelled): acknowledge the stream entry, delete it and
 * its index entry, in one step.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the message id ('' when unknown)
 * Returns the number of entries deleted (0 if another consumer already finished it).
 */
export const completeDelivery = new LuaScript(
  'complete-delivery',
  2,
  `
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[3])
end
return redis.call('XDEL', KEYS[1], ARGV[2])
`,
);
