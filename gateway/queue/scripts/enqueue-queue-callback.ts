import { LuaScript } from './lua-script.js';
import { STORE_MESSAGES_LUA } from './enqueue-messages.js';

/**
 * Stores the callback of a queue's message onto the stream holding one of that queue's slots
 * (its id joins the queue's active set), in one step: the slot is held from the moment the
 * callback exists, and the release of the message it reports on, which comes after, does not
 * start the queue's next message (QStash: the next message waits for callbacks). The callback's
 * own release (process-entry.ts) frees it; a crash before then is healed by the slot audit.
 *
 * KEYS[1]  the message stream
 * KEYS[2]  the stream index (hash: message id -> stream entry id)
 * KEYS[3]  the queue's active set
 * KEYS[4]  the events stream
 * ARGV[1]  the stream entry field that holds a message
 * ARGV[2]  the events cap (0: record none)
 * ARGV[3]  the callback message's id
 * ARGV[4]  the encoded callback message
 * ARGV[5]  its CREATED event (JSON; '' = none)
 */
export const enqueueQueueCallback = new LuaScript(
  'enqueue-queue-callback',
  4,
  `${STORE_MESSAGES_LUA}
redis.call('SADD', KEYS[3], ARGV[3])
store_message({KEYS[1], KEYS[2]}, ARGV[1], ARGV[3], 0, ARGV[4])
record_event(KEYS[4], ARGV[2], ARGV[5])
return 1
`,
);
