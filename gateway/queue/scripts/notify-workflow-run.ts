import { LuaScript } from './lua-script.js';

/**
 * An event notified to one run (`/v2/notify/{runId}/{eventId}`): the run's waiter for it is taken,
 * or, when the run is not waiting for it yet, the event is kept for its next wait (QStash's
 * "lookback"). Reads only the names of this event's waiter fields (HKEYS, `<runId>/<timer id>`;
 * not every waiter's JSON, as HGETALL did) and the one waiter it takes.
 *
 * KEYS[1]  the event's waiters (hash: `<runId>/<timer id>` -> waiter JSON)
 * KEYS[2]  the run's notices (hash: event id -> data)
 * KEYS[3]  the run's hash: its pointer to the taken waiter (`<ARGV[4]><timer id>`) goes
 * ARGV[1]  `<runId>/`: the prefix of the run's waiter fields
 * ARGV[2]  the event id
 * ARGV[3]  the event's data
 * ARGV[4]  the prefix of the run's waiter pointers (workflow-event.ts RUN_WAIT_FIELD_PREFIX)
 * Returns {1, waiter JSON} when a waiter was taken, {0} when the event was kept.
 */
export const notifyWorkflowRun = new LuaScript(
  'notify-workflow-run',
  3,
  `
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, #ARGV[1]) == ARGV[1] then
    local waiter = redis.call('HGET', KEYS[1], field)
    redis.call('HDEL', KEYS[1], field)
    redis.call('HDEL', KEYS[3], ARGV[4] .. string.sub(field, #ARGV[1] + 1))
    return {1, waiter}
  end
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return {0}
`,
);
