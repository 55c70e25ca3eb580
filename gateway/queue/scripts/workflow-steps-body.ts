/**
 * Lua snippet: `steps_body(steps, limit)`, the body of a run's delivery: its steps so far as the
 * JSON array the SDK's parser reads (workflow-parser.ts), or '' once that array would be longer
 * than `limit` bytes. An empty body makes the SDK fetch the steps itself (GET
 * /v2/workflows/runs/{runId}, "LazyFetch"), so a long run does not copy all its steps into every
 * message it sends.
 */
export const WORKFLOW_STEPS_BODY_LUA = `
local function steps_body(steps, limit)
  local all = redis.call('LRANGE', steps, 0, -1)
  local size = 2 + #all
  for _, step in ipairs(all) do size = size + #step end
  if size > limit then return '' end
  return '[' .. table.concat(all, ',') .. ']'
end
`;
