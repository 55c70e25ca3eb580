import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { retryOverridesOf } from './dlq-retry.js';
import { sendJson } from './json-response.js';
import { storeCall } from './store-call.js';
import { onlyQuery } from './workflow-routes.js';
import {
  isWorkflowLetter,
  notActionable,
  restartAsNewRun,
  resumeAsNewRun,
  type EntryAction,
  type StartedRun,
  type WorkflowLetter,
} from './workflow-dlq-actions.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { buildWorkflowDeadLetterAnswer } from '../core/workflow-dlq.js';
import { isWorkflowRunId, newWorkflowRunId, WORKFLOW_RUN_ID_HEADER } from '../core/workflow-message.js';
import { BindingStores } from '../stores/binding-stores.js';

/**
 * The workflow DLQ's single-entry routes, which Upstash's REST docs list and @upstash/workflow
 * 1.3.3 does not call (its client.dlq sends the bulk forms, workflow-dlq-routes.ts):
 *   GET    /v2/workflows/dlq/{dlqId}          the entry, as the list answers it
 *   DELETE /v2/workflows/dlq/{dlqId}          the entry leaves the DLQ: {deleted: 1}
 *   POST   /v2/workflows/dlq/resume/{dlqId}   its run resumes as a new run: {workflowRunId, workflowCreatedAt}
 *   POST   /v2/workflows/dlq/restart/{dlqId}  its run starts over as a new run: the same answer
 * An unknown dlqId, or one of a plain message's dead letter, is a 404; resume and restart take the
 * new run's id from Upstash-Workflow-RunId when given (a run id that exists is a 400), and the
 * publish headers a DLQ retry takes as overrides.
 */

/** The entry the path names, a workflow run's; a 404 otherwise. */
async function entryOf(request: ApiRequest): Promise<WorkflowLetter> {
  onlyQuery(request, []);
  const dlqId = request.params.id ?? '';
  const [letter] = await storeCall('read the dead letter', () =>
    new BindingStores(request).deadLetters().get([dlqId]),
  );
  if (!isWorkflowLetter(letter)) throw new ResourceNotFoundError(`workflow dead letter ${dlqId} not found`);
  return letter;
}

const getEntry: ApiHandler = async (request) => {
  const letter = await entryOf(request);
  const run = await storeCall('read the workflow run', () =>
    new BindingStores(request).workflowRuns().get(letter.workflow.runId),
  );
  sendJson(request.res, 200, buildWorkflowDeadLetterAnswer(letter, run));
};

const deleteEntry: ApiHandler = async (request) => {
  const letter = await entryOf(request);
  const deleted = await storeCall('delete the dead letter', () =>
    new BindingStores(request).deadLetters().delete([letter.dlqId]),
  );
  if (deleted !== 1) throw new ResourceNotFoundError(`workflow dead letter ${letter.dlqId} not found`);
  sendJson(request.res, 200, { deleted });
};

/**
 * The new run's id: the request's Upstash-Workflow-RunId (as Upstash's docs let a resume or
 * restart name it) or a new one. The SDK sends every later step under it, which the gateway takes
 * only as `wfr_...`; one that exists is refused before anything changes.
 */
async function newRunIdOf(request: ApiRequest): Promise<string> {
  const given = request.req.headers[WORKFLOW_RUN_ID_HEADER];
  if (given === undefined) return newWorkflowRunId();
  const runId = Array.isArray(given) ? given.join(', ') : given;
  if (!isWorkflowRunId(runId))
    throw new InvalidRequestError(
      `Upstash-Workflow-RunId ${JSON.stringify(runId)} is not a workflow run id (wfr_ followed by letters, digits, -, _ or .)`,
    );
  const existing = await storeCall('read the workflow run', () =>
    new BindingStores(request).workflowRuns().get(runId),
  );
  if (existing) throw new InvalidRequestError(`Upstash-Workflow-RunId: workflow run ${runId} exists`);
  return runId;
}

function entryAction(
  act: (request: ApiRequest, input: EntryAction) => Promise<StartedRun | undefined>,
): ApiHandler {
  return async (request) => {
    const overrides = retryOverridesOf(request);
    const letter = await entryOf(request);
    const run = await storeCall('read the workflow run', () =>
      new BindingStores(request).workflowRuns().get(letter.workflow.runId),
    );
    if (run?.state !== 'RUN_FAILED') throw notActionable(letter, run);
    const runId = await newRunIdOf(request);
    const started = await act(request, { letter, run, overrides, runId });
    // The run was dropped (its retention) between the read above and the action: nothing changed.
    if (!started) throw new ResourceNotFoundError(`workflow dead letter ${letter.dlqId} not found`);
    sendJson(request.res, 200, started);
  };
}

export function workflowDlqEntryRoutes(): ApiRoute[] {
  return [
    { path: 'workflows/dlq/resume/:id', methods: { POST: entryAction(resumeAsNewRun) } },
    { path: 'workflows/dlq/restart/:id', methods: { POST: entryAction(restartAsNewRun) } },
    { path: 'workflows/dlq/:id', methods: { GET: getEntry, DELETE: deleteEntry } },
  ];
}
