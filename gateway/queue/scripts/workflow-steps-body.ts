/**
 * Lua snippet: `steps_body(run, steps, limit, pushed)`, the body of a run's delivery, called once
 * `pushed` (a step's JSON) has joined the run's `steps`: its steps so far as the JSON array the
 * SDK's parser reads (workflow-parser.ts), or '' once that array would be longer than `limit`
 * bytes. An empty body makes the SDK fetch the steps itself (GET /v2/workflows/runs/{runId},
 * "LazyFetch"), so a long run does not copy all its steps into every message it sends.
 *
 * The run's hash counts the list's bytes as steps join (`inlineBytes`: each step's length and
 * its comma), so a run past the limit reads none of its steps: without it each of its later steps
 * read the whole list (up to its context limit) only to find it too long, a run's steps costing
 * the square of its length. The count is never more than the list's size (a run started before
 * it counts from its next step), so below the limit the size is taken from the list itself.
 */
export const WORKFLOW_STEPS_BODY_LUA = `
local function steps_body(run, steps, limit, pushed)
  if redis.call('HINCRBY', run, 'inlineBytes', #pushed + 1) + 2 > limit then return '' end
  local all = redis.call('LRANGE', steps, 0, -1)
  local size = 2 + #all
  for _, step in ipairs(all) do size = size + #step end
  if size > limit then return '' end
  return '[' .. table.concat(all, ',') .. ']'
end
`;
