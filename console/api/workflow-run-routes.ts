import express, { type Request, type Response, type Router } from 'express';
import { BadInputError } from '../http/errors.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { callQueueApi, QUEUE_ID_PATTERN } from './queue-api-client.js';
import { buildWorkflowRunRows, type WorkflowRunLogInput, type WorkflowRunPage } from './workflow-run-view.js';
import { objectName, userRequest } from './user-context.js';

/** Runs a page of the view shows, newest first. */
const RUNS_PAGE = 50;

/**
 * /api/namespaces/:namespace/bindings/:name/workflow-runs: a binding's workflow runs with their
 * steps, and cancel of a running one, through the binding's own QStash API (client.logs()'s and
 * client.cancel()'s routes) with the binding's VQUEUE_TOKEN read as the user (see callQueueApi).
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

  router.delete('/workflow-runs/:runId', async (req: Request, res: Response) => {
    const user = userRequest(req, res);
    const runId = req.params.runId;
    if (typeof runId !== 'string' || !runId.startsWith('wfr_') || !QUEUE_ID_PATTERN.test(runId))
      throw new BadInputError('runId is not a workflow run id', { runId: 'not a workflow run id' });
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
