import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { sendJson } from './json-response.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { BindingStores } from '../stores/binding-stores.js';
import type { WorkflowRunStore } from '../stores/workflow-run-store.js';
import type { WorkflowRunRecord } from '../core/workflow-message.js';
import { buildWorkflowRunLog } from '../core/workflow-run-log.js';
import {
  hasRunFilters,
  matchesRun,
  parseWorkflowRunQuery,
  type FilterableRun,
} from '../core/workflow-run-query.js';

/**
 * The workflow routes the SDK's serve() calls while a run goes (docs/workflow.md lists them with
 * the SDK calls that use them):
 *   GET    /v2/workflows/runs/{runId}               a running run's steps (LazyFetch), or 404
 *   DELETE /v2/workflows/runs/{runId}?cancel=false  the run succeeded; the body is its result
 *   DELETE /v2/workflows/runs/{runId}?cancel=true   context.cancel(): the run is cancelled
 *   DELETE /v2/workflows/runs                        client.cancel by ids, URL, prefix, label, all
 *   GET    /v2/workflows/events                      client.logs
 */

function runsOf(request: ApiRequest): WorkflowRunStore {
  return new BindingStores(request).workflowRuns();
}

function runIdOf(request: ApiRequest): string {
  return request.params.runId ?? '';
}

export function onlyQuery(request: ApiRequest, allowed: readonly string[]): void {
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
async function cancelRunMessages(request: ApiRequest, runId: string): Promise<void> {
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
  const ended = await storeCall('end the workflow run', () =>
    cancel === 'true'
      ? cancelRun(request, runId)
      : new BindingStores(request)
          .workflowEvents()
          .finishRun(runId, { state: 'RUN_SUCCESS', at: Date.now(), response: result }),
  );
  // A 400 is what the SDK takes as "already finished" (workflow-requests.ts triggerRouteFunction).
  if (!ended) throw new InvalidRequestError(`workflow run ${runId} is not running (${run.state})`);
  sendJson(request.res, 200, {});
};

/** Cancels a running run and what it has pending; false when it was not running. */
async function cancelRun(request: ApiRequest, runId: string): Promise<boolean> {
  const events = new BindingStores(request).workflowEvents();
  if (!(await events.finishRun(runId, { state: 'RUN_CANCELED', at: Date.now() }))) return false;
  await cancelRunMessages(request, runId);
  return true;
}

/** The most runs one logs page or one cancel by filter takes (the SDK sends 100 for a cancel). */
const MAX_RUNS_PER_CALL = 1_000;
const DEFAULT_LOGS_COUNT = 10;
const DEFAULT_CANCEL_COUNT = 100;
const RUN_FILTERS = ['workflowUrl', 'workflowUrlExactMatch', 'label', 'fromDate', 'toDate', 'flowControlKey'];

function filterableOf(run: WorkflowRunRecord): FilterableRun {
  return {
    runId: run.runId,
    url: run.config.url,
    label: run.config.label,
    state: run.state,
    createdAt: run.createdAt,
    flowControlKey: run.config.flowControl?.key,
  };
}

/**
 * client.cancel: by `workflowRunIds` (each named run that is running), or by filters, or all
 * (`count` alone), at most `count` runs that are running, newest first. Answers `{cancelled}`. A
 * request with none of these is a 400.
 */
const cancelRuns: ApiHandler = async (request) => {
  const { filters, count } = parseWorkflowRunQuery(request.query, {
    allowed: ['workflowRunIds', ...RUN_FILTERS],
    maxCount: MAX_RUNS_PER_CALL,
  });
  const { runIds, ...others } = filters;
  let cancelled = 0;
  if (runIds !== undefined) {
    if (hasRunFilters(others))
      throw new InvalidRequestError('workflowRunIds cannot be combined with filters');
    for (const runId of runIds)
      if (await storeCall('cancel the workflow run', () => cancelRun(request, runId))) cancelled += 1;
    sendJson(request.res, 200, { cancelled });
    return;
  }
  // The SDK's {all: true} sends count alone: a request naming nothing is never read as every run.
  if (!hasRunFilters(others) && count === undefined)
    throw new InvalidRequestError(
      'the request names no workflow runs: give workflowRunIds, filters, or count to cancel every run',
    );
  const { runs } = await storeCall('read the workflow runs', () =>
    runsOf(request).page({
      count: count ?? DEFAULT_CANCEL_COUNT,
      matches: (run) => run.state === 'RUN_STARTED' && matchesRun(filterableOf(run), others),
    }),
  );
  for (const run of runs)
    if (await storeCall('cancel the workflow run', () => cancelRun(request, run.runId))) cancelled += 1;
  sendJson(request.res, 200, { cancelled });
};

/**
 * client.logs: the runs newest first with their steps (and a waiting run's waits, read through its
 * own pointers), `count` a page (10 by default), and `cursor`.
 */
const listRunLogs: ApiHandler = async (request) => {
  const { filters, count, cursor } = parseWorkflowRunQuery(request.query, {
    allowed: ['groupBy', 'workflowRunId', 'state', 'workflowCreatedAt', ...RUN_FILTERS],
    maxCount: MAX_RUNS_PER_CALL,
  });
  const runs = runsOf(request);
  const page = await storeCall('read the workflow runs', () =>
    runs.page({
      ...(cursor === undefined ? {} : { cursor }),
      count: count ?? DEFAULT_LOGS_COUNT,
      matches: (run) => matchesRun(filterableOf(run), filters),
    }),
  );
  const events = new BindingStores(request).workflowEvents();
  const logs = await storeCall('read the workflow runs', () =>
    Promise.all(
      page.runs.map(async (run) =>
        buildWorkflowRunLog(run, await runs.steps(run.runId), await events.waitersOfRun(run)),
      ),
    ),
  );
  sendJson(request.res, 200, { cursor: page.cursor ?? '', runs: logs });
};

export function workflowRoutes(): ApiRoute[] {
  return [
    { path: 'workflows/runs', methods: { DELETE: cancelRuns } },
    { path: 'workflows/runs/:runId', methods: { GET: getRunSteps, DELETE: endRun } },
    { path: 'workflows/events', methods: { GET: listRunLogs } },
  ];
}
