import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { sendJson } from './json-response.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { BindingStores } from '../stores/binding-stores.js';
import type { WorkflowRunStore } from '../stores/workflow-run-store.js';

/**
 * The workflow routes the SDK's serve() calls while a run goes (docs/workflow.md lists them with
 * the SDK calls that use them):
 *   GET    /v2/workflows/runs/{runId}               a running run's steps (LazyFetch), or 404
 *   DELETE /v2/workflows/runs/{runId}?cancel=false  the run succeeded; the body is its result
 *   DELETE /v2/workflows/runs/{runId}?cancel=true   context.cancel(): the run is cancelled
 */

function runsOf(request: ApiRequest): WorkflowRunStore {
  return new BindingStores(request).workflowRuns();
}

function runIdOf(request: ApiRequest): string {
  return request.params.runId ?? '';
}

function onlyQuery(request: ApiRequest, allowed: readonly string[]): void {
  for (const name of request.query.keys())
    if (!allowed.includes(name))
      throw new InvalidRequestError(`unknown query parameter ${JSON.stringify(name)}`);
}

const getRunSteps: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const runId = runIdOf(request);
  const runs = runsOf(request);
  const run = await storeCall('read the workflow run', () => runs.get(runId));
  // The SDK reads a 404 as "the run ended before this delivery" and stops (client/utils.ts getSteps).
  if (!run || run.state !== 'RUN_STARTED') throw new ResourceNotFoundError(`workflow run ${runId} not found`);
  const steps = await storeCall('read the workflow run', () => runs.steps(runId));
  sendJson(
    request.res,
    200,
    steps.map(({ messageId, body, callType }) => ({ messageId, body, callType })),
  );
};

/** The largest run result kept: what a step may carry. */
function resultLimit(request: ApiRequest): number {
  return request.config.maxBodyBytes;
}

/**
 * Cancels what a cancelled run still has pending: its steps' messages (a delayed sleep, a retry,
 * a parallel step not yet delivered). One already being delivered is not sent again once its
 * entry is gone, and the step it publishes is refused, so the run runs no further step.
 */
export async function cancelRunMessages(request: ApiRequest, runId: string): Promise<void> {
  const ids = (await runsOf(request).steps(runId)).map((step) => step.messageId);
  await new BindingStores(request).pending().cancel(ids);
}

const endRun: ApiHandler = async (request) => {
  onlyQuery(request, ['cancel']);
  const cancel = request.query.get('cancel') ?? 'false';
  if (cancel !== 'true' && cancel !== 'false')
    throw new InvalidRequestError(`query parameter cancel ${JSON.stringify(cancel)} is not true or false`);
  const runId = runIdOf(request);
  const result = (await readBody(request.req, resultLimit(request))).toString('utf8');
  const runs = runsOf(request);
  const run = await storeCall('read the workflow run', () => runs.get(runId));
  if (!run) throw new ResourceNotFoundError(`workflow run ${runId} not found`);
  const at = Date.now();
  const ended = await storeCall('end the workflow run', () =>
    cancel === 'true'
      ? runs.finish(runId, { state: 'RUN_CANCELED', at })
      : runs.finish(runId, { state: 'RUN_SUCCESS', at, response: result }),
  );
  // A 400 is what the SDK takes as "already finished" (workflow-requests.ts triggerRouteFunction).
  if (!ended) throw new InvalidRequestError(`workflow run ${runId} is not running (${run.state})`);
  if (cancel === 'true')
    await storeCall("cancel the run's messages", () => cancelRunMessages(request, runId));
  sendJson(request.res, 200, {});
};

export function workflowRoutes(): ApiRoute[] {
  return [{ path: 'workflows/runs/:runId', methods: { GET: getRunSteps, DELETE: endRun } }];
}
