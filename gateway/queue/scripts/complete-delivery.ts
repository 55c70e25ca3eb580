import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * A delivery succeeded (or its message was cancelled): acknowledge the stream entry, delete it and
 * its index entry, and record the DELIVERED event if there is one, in one step.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the events stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the stream entry id
 * ARGV[3]  the message id ('' when unknown)
 * ARGV[4]  the events cap (0: record none)
 * ARGV[5]  the DELIVERED event (JSON), or ''
 * Returns the number of entries deleted (0 if another consumer already finished it).
 */
export const completeDelivery = new LuaScript(
  'complete-delivery',
  3,
  `${RECORD_EVENT_LUA}
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[3])
end
record_event(KEYS[3], ARGV[4], ARGV[5])
return redis.call('XDEL', KEYS[1], ARGV[2])
`,
);
