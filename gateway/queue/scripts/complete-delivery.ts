import { LuaScript } from './lua-script.js';
import { RECORD_EVENT_LUA } from './record-event.js';

/**
 * Deliveries that succeeded (or whose message was cancelled): for each, acknowledge the stream
 * entry, delete it and its index entry, and record the DELIVERED event if there is one. One run
 * completes every delivery that finished in the same pass of the worker's event loop
 * (entry-completions.ts); each entry's steps are the same as when it is completed alone.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the events stream
 * ARGV[1]  the consumer group
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3..] triples: a stream entry id, its message id ('' when unknown), its DELIVERED event
 *          (JSON; '' = none)
 * Returns the number of entries deleted (fewer when another consumer already finished some).
 */
export const completeDelivery = new LuaScript(
  'complete-delivery',
  3,
  `${RECORD_EVENT_LUA}
local deleted = 0
for i = 3, #ARGV, 3 do
  local entry, id = ARGV[i], ARGV[i + 1]
  redis.call('XACK', KEYS[1], ARGV[1], entry)
  local removed = redis.call('XDEL', KEYS[1], entry)
  -- A newer attempt of the message (its retry moved back to the stream) keeps its index entry.
  -- Every script that takes a message off the stream deletes its entry in the same step, so while
  -- this entry was still there no newer one existed and its index entry is this one's: only a late
  -- completion (the entry already gone) reads the index first.
  if id ~= '' and (removed == 1 or redis.call('HGET', KEYS[2], id) == entry) then
    redis.call('HDEL', KEYS[2], id)
  end
  record_event(KEYS[3], ARGV[2], ARGV[i + 2])
  deleted = deleted + removed
end
return deleted
`,
);
