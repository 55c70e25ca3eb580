import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { buildRetriedMessage, retryOverridesOf } from './dlq-retry.js';
import { sendJson } from './json-response.js';
import { storeCall } from './store-call.js';
import { onlyQuery } from './workflow-routes.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { quotasOf } from '../core/quotas.js';
import { BindingStores } from '../stores/binding-stores.js';

/**
 * The workflow DLQ (docs/workflow.md):
 *   POST /v2/workflows/dlq/resume?dlqIds=...   client.dlq.resume: each failed run runs again from
 *                                               its failed step, sent again from its dead letter
 * Answers `{workflowRuns: [{workflowRunId, workflowCreatedAt}]}`. Filters, restart and the
 * failure function's retry are not served yet.
 */

const resume: ApiHandler = async (request) => {
  onlyQuery(request, ['dlqIds']);
  const dlqIds = request.query.getAll('dlqIds').filter((id) => id !== '');
  if (dlqIds.length === 0)
    throw new InvalidRequestError('dlqIds is required: the dead letters of the failed runs to resume');
  const stores = new BindingStores(request);
  const overrides = retryOverridesOf(request);
  const letters = await storeCall('read the dead letters', () => stores.deadLetters().get(dlqIds));
  const runs = stores.workflowRuns();
  // Every letter checked before any run changes: a bad id resumes nothing.
  const found = await Promise.all(
    letters.map(async (letter, i) => {
      const runId = letter?.headers['upstash-workflow-runid'];
      if (!letter || runId === undefined)
        throw new ResourceNotFoundError(`workflow dead letter ${dlqIds[i]} not found`);
      const run = await storeCall('read the workflow run', () => runs.get(runId));
      if (!run) throw new ResourceNotFoundError(`workflow dead letter ${dlqIds[i]} not found`);
      if (run.state !== 'RUN_FAILED')
        throw new InvalidRequestError(
          `workflow run ${runId} is not failed (${run.state}): nothing to resume`,
        );
      return { letter, run };
    }),
  );
  const now = Date.now();
  const workflowRuns = [];
  for (const { letter, run } of found) {
    if (!(await storeCall('reopen the workflow run', () => runs.reopen(run.runId)))) continue;
    const message = buildRetriedMessage(letter, overrides, now);
    // Still a step of its run: failing again fails the run again, with its failure callback.
    message.workflow = {
      runId: run.runId,
      createdAt: run.createdAt,
      ...(message.failureCallback ? { initialBody: await runs.initialBody(run.runId) } : {}),
    };
    await storeCall('resend the failed step', () =>
      stores.deadLetters().retry([{ dlqId: letter.dlqId, message }], quotasOf(request.target), now),
    );
    workflowRuns.push({ workflowRunId: run.runId, workflowCreatedAt: run.createdAt });
  }
  sendJson(request.res, 200, { workflowRuns });
};

export function workflowDlqRoutes(): ApiRoute[] {
  return [{ path: 'workflows/dlq/resume', methods: { POST: resume } }];
}
