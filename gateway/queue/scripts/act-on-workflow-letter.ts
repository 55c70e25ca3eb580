import { STORE_MESSAGES_LUA } from './enqueue-messages.js';
import { STORE_FLOW_CONTROL_MESSAGE_LUA } from './enqueue-flow-control-messages.js';
import { LuaScript } from './lua-script.js';
import { RESUME_WORKFLOW_RUN_LUA } from './resume-workflow-run.js';
import { SERVER_NOW_LUA } from './server-now.js';
import { START_WORKFLOW_RUN_LUA } from './start-workflow-run.js';

/**
 * A workflow DLQ entry resumes (client.dlq.resume: a new run holding the failed run's steps, its
 * failed step sent again there) or restarts (client.dlq.restart: a new run from the payload), in
 * one step: the entry is checked, the new run started, its first delivery stored and the entry
 * taken out of the DLQ together. So two requests acting on one entry at once start one run (the
 * second finds the entry gone), and a replica dying on the way leaves either nothing changed or
 * all of it. Two variants, as a message is stored two ways: onto the stream or the schedule, or,
 * with flow control, into its flow-control key (enqueue-messages, enqueue-flow-control-messages).
 *
 * KEYS[1]  the dead letters (hash: dlqId -> JSON)
 * KEYS[2]  the dead-letter order (sorted set of dlqIds)
 * KEYS[3]  the failed run (hash), KEYS[4] its steps (list), KEYS[5] its counted step ids (set)
 * KEYS[6]  the new run (hash), KEYS[7] its steps (list), KEYS[8] its counted step ids (set)
 * KEYS[9]  the runs by creation time (sorted set: run id -> createdAt)
 * KEYS[10] the events stream
 * Without flow control (actOnWorkflowLetter):
 * KEYS[11] the message stream, KEYS[12] the stream index, KEYS[13] the schedule, KEYS[14] the
 *          scheduled messages (as enqueue-messages' KEYS[1..4])
 * With flow control (actOnWorkflowLetterWithFlowControl):
 * KEYS[11..17] the delivery's flow-control keys, as enqueue-flow-control-messages' KEYS[1..7]
 * ARGV[1]  'resume' or 'restart'
 * ARGV[2]  the entry's dlqId
 * ARGV[3]  the new run's id
 * ARGV[4]  the new run's WorkflowRunConfig JSON
 * ARGV[5]  the new run's creation time, ms
 * ARGV[6]  the first delivery's message id
 * ARGV[7]  its due time (ms; 0 = now)
 * ARGV[8]  it, encoded
 * ARGV[9]  its CREATED event (JSON; '' = none)
 * ARGV[10] the stream entry field that holds a message
 * ARGV[11] the events cap (0: record none)
 * ARGV[12] restart: the new run's first step (the payload) as raw step JSON; resume: ''
 * ARGV[13] restart: the largest delivery body that carries the steps (bytes)
 * ARGV[14] restart: the payload's bytes
 * ARGV[15] with flow control: the flow-control key
 * ARGV[16] with flow control: the delivery's limits (JSON, as enqueue-flow-control-messages')
 * Returns 1 once the run started and the entry left the DLQ; 0 when the entry is gone (another
 * request acted on it, or deleted it); -1 when the new run id is taken; -2 when the failed run is
 * not RUN_FAILED or no longer kept. Nothing changes unless 1.
 */
function actOnWorkflowLetterLua(store: { snippets: string; delivery: string }): string {
  return `${STORE_MESSAGES_LUA}${RESUME_WORKFLOW_RUN_LUA}${START_WORKFLOW_RUN_LUA}${store.snippets}
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then return 0 end
if redis.call('HGET', KEYS[3], 'state') ~= 'RUN_FAILED' then return -2 end
if redis.call('EXISTS', KEYS[6]) == 1 then return -1 end
local runs = {failed = KEYS[3], failed_steps = KEYS[4], failed_ids = KEYS[5],
  run = KEYS[6], steps = KEYS[7], ids = KEYS[8], order = KEYS[9]}
if ARGV[1] == 'resume' then
  resume_run(runs, ARGV[3], ARGV[4], ARGV[5])
else
  start_run(runs, ARGV[3], ARGV[4], ARGV[5], ARGV[12], ARGV[6], ARGV[13], ARGV[14])
end
${store.delivery}
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
`;
}

export const actOnWorkflowLetter = new LuaScript(
  'act-on-workflow-letter',
  14,
  actOnWorkflowLetterLua({
    snippets: '',
    delivery: `store_message({KEYS[11], KEYS[12], KEYS[13], KEYS[14]}, ARGV[10], ARGV[6], ARGV[7], ARGV[8])
record_event(KEYS[10], ARGV[11], ARGV[9])`,
  }),
);

export const actOnWorkflowLetterWithFlowControl = new LuaScript(
  'act-on-workflow-letter-with-flow-control',
  17,
  actOnWorkflowLetterLua({
    snippets: `${SERVER_NOW_LUA}${STORE_FLOW_CONTROL_MESSAGE_LUA}`,
    delivery: `local k = flow_control_keys(11)
local now = server_now()
store_flow_control_message(k, ARGV[15], now, ARGV[6], tonumber(ARGV[7]), ARGV[8], cjson.decode(ARGV[16]))
record_event(KEYS[10], ARGV[11], ARGV[9])
dispatch_flow_control(k, ARGV[10], ARGV[15], now)`,
  }),
);
