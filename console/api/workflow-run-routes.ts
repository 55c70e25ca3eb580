import express, { type Request, type Response, type Router } from 'express';
import { BadInputError, QueueApiError } from '../http/errors.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { callQueueApi, QUEUE_ID_PATTERN } from './queue-api-client.js';
import {
  buildWorkflowRunRows,
  buildWorkflowRunWaiters,
  type WaiterInput,
  type WorkflowRunLogInput,
  type WorkflowRunPage,
  type WorkflowRunWaiters,
} from './workflow-run-view.js';
import { objectName, userRequest } from './user-context.js';

/** Runs a page of the view shows, newest first. */
const RUNS_PAGE = 50;

/** The run id of the path: a 400 naming it unless it is one the queue hands out. */
function runIdOf(req: Request): string {
  const runId = req.params.runId;
  if (typeof runId !== 'string' || !runId.startsWith('wfr_') || !QUEUE_ID_PATTERN.test(runId))
    throw new BadInputError('runId is not a workflow run id', { runId: 'not a workflow run id' });
  return runId;
}

/**
 * /api/namespaces/:namespace/bindings/:name/workflow-runs: a binding's workflow runs with their
 * steps and waits, one run's waiters, and cancel of a running one, through the binding's own
 * QStash API (client.logs()'s, client.getWaiters()'s and client.cancel()'s routes) with the
 * binding's VQUEUE_TOKEN read as the user (see callQueueApi).
 */
export function workflowRunRoutes(options: { kube: KubeHttp; queueBaseUrl: string | undefined }): Router {
  const { kube, queueBaseUrl } = options;
  const router = express.Router({ mergeParams: true });

  router.get('/workflow-runs', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const page = await callQueueApi<{ runs?: WorkflowRunLogInput[]; cursor?: string }>({
      kube,
      user,
      binding: objectName(req),
      queueBaseUrl,
      method: 'GET',
      path: `workflows/events?count=${RUNS_PAGE}`,
    });
    const answer: WorkflowRunPage = {
      runs: buildWorkflowRunRows(page.runs ?? []),
      more: page.cursor !== undefined && page.cursor !== '',
    };
    res.json(answer);
  });

  // One run's waits, each with its event's waiters: the run's own logs (which name its events, read
  // from the run) and getWaiters of each of those events only, never a scan of the binding.
  router.get('/workflow-runs/:runId/waiters', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const runId = runIdOf(req);
    const queue = <T>(path: string) =>
      callQueueApi<T>({ kube, user, binding: objectName(req), queueBaseUrl, method: 'GET', path });
    const page = await queue<{ runs?: WorkflowRunLogInput[] }>(
      `workflows/events?workflowRunId=${runId}&count=1`,
    );
    const [row] = buildWorkflowRunRows(page.runs ?? []);
    if (!row) throw new QueueApiError(404, `workflow run ${runId} not found`);
    const eventIds = [...new Set(row.waits.map((wait) => wait.eventId))];
    const waiters = await Promise.all(
      eventIds.map(async (eventId) => {
        const answer = await queue<WaiterInput[]>(`waiters/${encodeURIComponent(eventId)}`);
        return [eventId, Array.isArray(answer) ? answer : []] as const;
      }),
    );
    const answer: WorkflowRunWaiters = buildWorkflowRunWaiters(row, new Map(waiters));
    res.json(answer);
  });

  router.delete('/workflow-runs/:runId', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const runId = runIdOf(req);
    await callQueueApi({
      kube,
      user,
      binding: objectName(req),
      queueBaseUrl,
      method: 'DELETE',
      path: `workflows/runs/${runId}?cancel=true`,
    });
    res.status(204).end();
  });

  return router;
}
