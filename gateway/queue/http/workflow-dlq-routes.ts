import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { buildRetriedMessage, retryOverridesOf } from './dlq-retry.js';
import { sendJson } from './json-response.js';
import { storeCall } from './store-call.js';
import {
  cancelResentCallback,
  isWorkflowLetter,
  notActionable,
  restartAsNewRun,
  resumeAsNewRun,
  type WorkflowLetter,
} from './workflow-dlq-actions.js';
import { onlyQuery } from './workflow-routes.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { quotasOf } from '../core/quotas.js';
import {
  buildWorkflowDeadLetterAnswer,
  matchesWorkflowLetter,
  parseWorkflowDlqQuery,
  WORKFLOW_DLQ_MAX_PAGE,
  type WorkflowDlqQuery,
} from '../core/workflow-dlq.js';
import { newWorkflowRunId, type WorkflowRunRecord } from '../core/workflow-message.js';
import { BindingStores } from '../stores/binding-stores.js';

/**
 * The workflow DLQ (docs/workflow.md), everything @upstash/workflow 1.3.3's `client.dlq` calls:
 *   GET    /v2/dlq?source=workflow (and /v2/workflows/dlq)  list: {messages, cursor?}
 *   POST   /v2/workflows/dlq/resume       each failed run resumes as a new run from its failed step
 *   POST   /v2/workflows/dlq/restart      each failed run's payload starts a new run
 *   POST   /v2/workflows/dlq/callback/{dlqId}  the run's failed failure callback is sent again
 *   DELETE /v2/workflows/dlq/callback/{dlqId}  that callback, while in progress, is cancelled (REST docs only)
 *   DELETE /v2/workflows/dlq              the entries are deleted: {deleted, cursor?}
 * Resume and restart answer {workflowRuns: [{workflowRunId, workflowCreatedAt}], cursor?}. The
 * bulk routes take dlqIds (every one checked before anything changes: unknown 404, not
 * actionable 400), filters, or `count` alone for every entry, a page at a time. The single-entry
 * routes are in workflow-dlq-entry-routes.ts, what resume and restart do in workflow-dlq-actions.ts.
 */

/** QStash resumes or restarts at most 50 runs a request and answers a cursor for the rest. */
const MAX_RUNS_PER_ACTION = 50;
const MAX_BULK_COUNT = 1_000;
const DEFAULT_PAGE = 100;

/** The entries the query names: its dlqIds (each one must be a workflow's entry), or a page of matches. */
async function selected(
  request: ApiRequest,
  query: WorkflowDlqQuery,
  pageSize: number,
): Promise<{ letters: WorkflowLetter[]; cursor?: string }> {
  const stores = new BindingStores(request);
  const ids = query.list.filters.dlqId;
  if (ids !== undefined) {
    if (ids.length > pageSize)
      throw new InvalidRequestError(`dlqIds names ${ids.length} entries: at most ${pageSize} a request`);
    const found = await storeCall('read the dead letters', () => stores.deadLetters().get(ids));
    return {
      letters: found.map((letter, i) => {
        if (!isWorkflowLetter(letter))
          throw new ResourceNotFoundError(`workflow dead letter ${ids[i]} not found`);
        return letter;
      }),
    };
  }
  const runs = stores.workflowRuns();
  const wanted = query.failureFunctionState;
  const page = await storeCall('read the dead letters', () =>
    stores.deadLetters().page({
      count: Math.min(query.list.count ?? DEFAULT_PAGE, pageSize),
      ...(query.list.cursor !== undefined && { cursor: query.list.cursor }),
      filters: {},
      accept: (letters) =>
        Promise.all(
          letters.map(async (letter) => {
            if (!letter || !matchesWorkflowLetter(letter, query)) return false;
            if (wanted === undefined) return true;
            return (await runs.get(letter.workflow!.runId))?.callback?.state === wanted;
          }),
        ),
    }),
  );
  return { letters: page.letters.filter(isWorkflowLetter), ...(page.cursor && { cursor: page.cursor }) };
}

/** Each letter's run; a dlqIds request needs every run kept and failed, checked before any change. */
async function runsOf(
  request: ApiRequest,
  letters: readonly WorkflowLetter[],
): Promise<(WorkflowRunRecord | undefined)[]> {
  const runs = new BindingStores(request).workflowRuns();
  return storeCall('read the workflow runs', () =>
    Promise.all(letters.map((letter) => runs.get(letter.workflow.runId))),
  );
}

function failedRuns(
  query: WorkflowDlqQuery,
  letters: readonly WorkflowLetter[],
  runs: readonly (WorkflowRunRecord | undefined)[],
): { letter: WorkflowLetter; run: WorkflowRunRecord }[] {
  const byIds = query.list.filters.dlqId !== undefined;
  const found = [];
  for (const [i, letter] of letters.entries()) {
    const run = runs[i];
    if (run?.state === 'RUN_FAILED') found.push({ letter, run });
    else if (byIds) throw notActionable(letter, run);
  }
  return found;
}

export const listWorkflowDeadLetters: ApiHandler = async (request) => {
  const query = parseWorkflowDlqQuery(request.query, { list: true, maxCount: WORKFLOW_DLQ_MAX_PAGE });
  const { letters, cursor } = await selected(request, query, WORKFLOW_DLQ_MAX_PAGE);
  const runs = await runsOf(request, letters);
  sendJson(request.res, 200, {
    messages: letters.map((letter, i) => buildWorkflowDeadLetterAnswer(letter, runs[i])),
    ...(cursor && { cursor }),
  });
};

async function bulkSelection(request: ApiRequest, maxCount: number, pageSize: number) {
  const query = parseWorkflowDlqQuery(request.query, { list: false, maxCount });
  const { letters, cursor } = await selected(request, query, pageSize);
  return { query, letters, cursor };
}

const resume: ApiHandler = async (request) => {
  const overrides = retryOverridesOf(request);
  const { query, letters, cursor } = await bulkSelection(request, MAX_BULK_COUNT, MAX_RUNS_PER_ACTION);
  const workflowRuns = [];
  for (const { letter, run } of failedRuns(query, letters, await runsOf(request, letters))) {
    const resumed = await resumeAsNewRun(request, { letter, run, overrides, runId: newWorkflowRunId() });
    if (resumed) workflowRuns.push(resumed);
  }
  sendJson(request.res, 200, { workflowRuns, ...(cursor && { cursor }) });
};

const restart: ApiHandler = async (request) => {
  const overrides = retryOverridesOf(request);
  const { query, letters, cursor } = await bulkSelection(request, MAX_BULK_COUNT, MAX_RUNS_PER_ACTION);
  const workflowRuns = [];
  for (const { letter, run } of failedRuns(query, letters, await runsOf(request, letters))) {
    const restarted = await restartAsNewRun(request, { letter, run, overrides, runId: newWorkflowRunId() });
    if (restarted) workflowRuns.push(restarted);
  }
  sendJson(request.res, 200, { workflowRuns, ...(cursor && { cursor }) });
};

const deleteEntries: ApiHandler = async (request) => {
  const { letters, cursor } = await bulkSelection(request, MAX_BULK_COUNT, MAX_BULK_COUNT);
  const deleted = await storeCall('delete the dead letters', () =>
    new BindingStores(request).deadLetters().delete(letters.map((l) => l.dlqId)),
  );
  sendJson(request.res, 200, { deleted, ...(cursor && { cursor }) });
};

/**
 * client.dlq.retryFailureFunction: the run's failure callback, dead-lettered itself
 * (CALLBACK_FAIL), is sent again and is in progress; any other state is a 400, as QStash answers.
 */
const retryFailureCallback: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const dlqId = request.params.id ?? '';
  const stores = new BindingStores(request);
  const [letter] = await storeCall('read the dead letter', () => stores.deadLetters().get([dlqId]));
  if (!isWorkflowLetter(letter)) throw new ResourceNotFoundError(`workflow dead letter ${dlqId} not found`);
  const runs = stores.workflowRuns();
  const { runId, createdAt } = letter.workflow;
  const run = await storeCall('read the workflow run', () => runs.get(runId));
  const callbackDlqId = run?.callback?.state === 'CALLBACK_FAIL' ? run.callback.dlqId : undefined;
  if (callbackDlqId === undefined)
    throw new InvalidRequestError(
      `workflow run ${runId} has no failed failure callback (${run?.callback?.state ?? 'none'})`,
    );
  const [callbackLetter] = await storeCall('read the dead letter', () =>
    stores.deadLetters().get([callbackDlqId]),
  );
  if (!callbackLetter)
    throw new InvalidRequestError(`the failure callback of workflow run ${runId} is no longer in the DLQ`);
  const now = Date.now();
  const message = { ...buildRetriedMessage(callbackLetter, {}, now), workflowFailureOf: { runId } };
  // In progress before it is sent: another replica may deliver it and record its outcome at once.
  // Only while it is still this failure, so of two retries at once one sends it. Its message id
  // is kept with the run: what a cancel of it (below) takes.
  const claimed = await storeCall('record the callback', () =>
    runs.setCallbackState(runId, 'CALLBACK_INPROGRESS', { ifFailedAs: callbackDlqId, messageId: message.id }),
  );
  if (!claimed)
    throw new InvalidRequestError(
      `the failure callback of workflow run ${runId} is already being sent again`,
    );
  const restore = () =>
    storeCall('record the callback', () =>
      runs.setCallbackState(runId, 'CALLBACK_FAIL', { dlqId: callbackDlqId }),
    );
  const [retried] = await storeCall('resend the failure callback', () =>
    stores.deadLetters().retry([{ dlqId: callbackDlqId, message }], quotasOf(request.target), now),
  ).catch(async (err: unknown) => {
    await restore();
    throw err;
  });
  if (!retried) {
    await restore();
    throw new InvalidRequestError(`the failure callback of workflow run ${runId} is no longer in the DLQ`);
  }
  sendJson(request.res, 200, { workflowRunId: runId, workflowCreatedAt: createdAt });
};

/**
 * DELETE /v2/workflows/dlq/callback/{dlqId} (Upstash's REST docs, "Cancel In-Progress Failure
 * Callback"; the SDK does not call it): the failure callback that retryFailureFunction sent again
 * and that is still in progress is cancelled (CALLBACK_CANCELED); with none in progress a 400, as
 * Upstash documents. Answers {workflowRunId, workflowCreatedAt}, as the retry does.
 */
const cancelFailureCallback: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const dlqId = request.params.id ?? '';
  const stores = new BindingStores(request);
  const [letter] = await storeCall('read the dead letter', () => stores.deadLetters().get([dlqId]));
  if (!isWorkflowLetter(letter)) throw new ResourceNotFoundError(`workflow dead letter ${dlqId} not found`);
  const { runId, createdAt } = letter.workflow;
  const run = await storeCall('read the workflow run', () => stores.workflowRuns().get(runId));
  await cancelResentCallback(request, { runId, callback: run?.callback });
  sendJson(request.res, 200, { workflowRunId: runId, workflowCreatedAt: createdAt });
};

export function workflowDlqRoutes(): ApiRoute[] {
  return [
    { path: 'workflows/dlq', methods: { GET: listWorkflowDeadLetters, DELETE: deleteEntries } },
    { path: 'workflows/dlq/resume', methods: { POST: resume } },
    { path: 'workflows/dlq/restart', methods: { POST: restart } },
    {
      path: 'workflows/dlq/callback/:id',
      methods: { POST: retryFailureCallback, DELETE: cancelFailureCallback },
    },
  ];
}
