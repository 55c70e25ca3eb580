import { LuaScript } from './lua-script.js';

/**
 * A run waits for an event (context.waitForEvent): unless the event was already notified to this
 * run (`/v2/notify/{runId}/{eventId}` before the wait, which QStash keeps for the run's next wait),
 * the waiter joins its event's waiters, and the run's hash points at it (so the run's logs show
 * what it waits for without reading other events). One step, so a notify of the run between the
 * check and the registration cannot be missed (notify-workflow-run takes the same keys).
 *
 * KEYS[1]  the run's notices (hash: event id -> data)
 * KEYS[2]  the event's waiters (hash: `<runId>/<timer id>` -> waiter JSON)
 * KEYS[3]  the run's hash (keys.ts workflowRun)
 * ARGV[1]  the event id
 * ARGV[2]  the waiter's field
 * ARGV[3]  the waiter's JSON
 * ARGV[4]  the run's field that points at the waiter (`wait:<timer id>`)
 * Returns {1, data} when a notice was waiting (taken, no waiter kept), {0, ''} once registered.
 */
export const registerWorkflowWait = new LuaScript(
  'register-workflow-wait',
  3,
  `
local data = redis.call('HGET', KEYS[1], ARGV[1])
if data then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return {1, data}
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
-- A run dropped meanwhile gets no hash of a pointer alone.
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[1])
end
return {0, ''}
`,
);
