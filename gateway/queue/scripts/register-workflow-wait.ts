import { LuaScript } from './lua-script.js';

/**
 * A run waits for an event (context.waitForEvent): unless the event was already notified to this
 * run (`/v2/notify/{runId}/{eventId}` before the wait, which QStash keeps for the run's next wait),
 * the waiter joins its event's waiters. One step, so a notify of the run between the check and the
 * registration cannot be missed (notify-workflow-run takes the same keys).
 *
 * KEYS[1]  the run's notices (hash: event id -> data)
 * KEYS[2]  the event's waiters (hash: `<runId>/<timer id>` -> waiter JSON)
 * ARGV[1]  the event id
 * ARGV[2]  the waiter's field
 * ARGV[3]  the waiter's JSON
 * Returns {1, data} when a notice was waiting (taken, no waiter kept), {0, ''} once registered.
 */
export const registerWorkflowWait = new LuaScript(
  'register-workflow-wait',
  2,
  `
local data = redis.call('HGET', KEYS[1], ARGV[1])
if data then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return {1, data}
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return {0, ''}
`,
);
