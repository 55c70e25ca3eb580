import type { ApiHandler, ApiRequest } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { sendJson } from './json-response.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';
import { onlyQuery } from './workflow-routes.js';
import { forwardedHeaders, single } from './publish/publish-headers.js';
import { InvalidRequestError, ResourceNotFoundError } from '../core/errors.js';
import { parseEventId, parseWaitRequest } from '../core/workflow-event.js';
import { WORKFLOW_RUN_ID_HEADER, type WorkflowRunRecord } from '../core/workflow-message.js';
import { workflowUserIdOf } from '../../../api/qstash-token.js';
import { BindingStores } from '../stores/binding-stores.js';

/**
 * The workflow event routes (docs/workflow.md lists them with the SDK calls that use them):
 *   POST /v2/wait/{eventId}                   context.waitForEvent: the run waits, with a timeout
 *   POST /v2/notify/{eventId}                 client.notify, context.notify: every waiting run resumes
 *   POST /v2/notify/{workflowRunId}/{eventId} the same for one run; kept for its next wait if it is not waiting
 *   GET  /v2/waiters/{eventId}                client.getWaiters
 *   any  /v2/workflows/hooks/{userId}/{workflowRunId}/{eventId}  a webhook of context.createWebhook,
 *        called without a token: the request is the event notified to the run (waitForWebhook)
 * Waiters live in the binding's own database: another binding's run ids and events are unknown here.
 */

function storesOf(request: ApiRequest): BindingStores {
  return new BindingStores(request);
}

function eventIdOf(request: ApiRequest): string {
  return parseEventId(request.params.eventId ?? '');
}

/**
 * The run `runId` of this binding while it runs: 404 when unknown; 400 when it ended, as for a step
 * publish, which the SDK takes as "the run ended" and stops.
 */
async function runningRunOf(request: ApiRequest, runId: string): Promise<WorkflowRunRecord> {
  const runs = storesOf(request).workflowRuns();
  const run = await storeCall('read the workflow run', () => runs.get(runId));
  if (!run) throw new ResourceNotFoundError(`workflow run ${runId} not found`);
  if (run.state !== 'RUN_STARTED')
    throw new InvalidRequestError(`workflow run ${runId} is not running (${run.state})`);
  return run;
}

const wait: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const eventId = eventIdOf(request);
  const runId = single(request.req.headers, WORKFLOW_RUN_ID_HEADER);
  if (runId === undefined || runId === '')
    throw new InvalidRequestError('Upstash-Workflow-RunId is required: the run that waits');
  const body = await readBody(request.req, request.config.maxBodyBytes);
  const waitRequest = parseWaitRequest(body, request.target.limits.maxDelayMs);
  const headers = forwardedHeaders(request.req.headers);
  const contentType = single(request.req.headers, 'content-type');
  if (contentType !== undefined) headers['content-type'] = contentType;
  await runningRunOf(request, runId);
  const events = storesOf(request).workflowEvents();
  const answer = await storeCall('store the waiter', () =>
    events.wait({ runId, eventId, request: waitRequest, headers }),
  );
  sendJson(request.res, 200, answer);
};

const notify: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const eventId = eventIdOf(request);
  const data = await readBody(request.req, request.config.maxBodyBytes);
  const events = storesOf(request).workflowEvents();
  const runId = request.params.runId;
  if (runId === undefined) {
    sendJson(request.res, 200, await storeCall('notify the waiters', () => events.notify(eventId, data)));
    return;
  }
  const run = await runningRunOf(request, runId);
  const notified = await storeCall('notify the run', () => events.notifyRun(runId, eventId, data));
  // Not waiting yet: kept for the run's next wait for this event, as QStash's lookback does.
  sendJson(request.res, 200, notified ?? { workflowRunId: runId, workflowCreatedAt: run.createdAt });
};

/** The methods an outside system may call a webhook with: any an HTTP client sends. */
const WEBHOOK_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * A run's webhook is called: the request, as the SDK's waitForWebhook reads it (`{method, proto,
 * host, url, header, body}`, the body base64), is event `eventId` notified to the run, and kept
 * for its next wait when it is not waiting yet (a webhook may be called before the run waits). No
 * token: the path's user id must be this binding's (api/qstash-token.ts), else 404, as is an
 * unknown run; a run that ended is a 400 as for a notify. Nothing is stored on a refusal.
 */
const callWebhook: ApiHandler = async (request) => {
  const { req, params } = request;
  if (params.userId !== workflowUserIdOf(request.target))
    throw new ResourceNotFoundError(`webhook user ${params.userId ?? ''} not found`);
  const eventId = eventIdOf(request);
  const runId = params.runId ?? '';
  const body = await readBody(req, request.config.maxBodyBytes);
  const run = await runningRunOf(request, runId);
  const data = Buffer.from(
    JSON.stringify({
      method: req.method,
      proto: (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http',
      host: req.headers.host ?? '',
      url: req.url,
      header: req.headersDistinct,
      body: body.toString('base64'),
    }),
    'utf8',
  );
  const events = storesOf(request).workflowEvents();
  const notified = await storeCall('notify the run', () => events.notifyRun(runId, eventId, data));
  sendJson(request.res, 200, notified ?? { workflowRunId: runId, workflowCreatedAt: run.createdAt });
};

const listWaiters: ApiHandler = async (request) => {
  onlyQuery(request, []);
  const eventId = eventIdOf(request);
  const events = storesOf(request).workflowEvents();
  sendJson(request.res, 200, await storeCall('read the waiters', () => events.waiters(eventId)));
};

export function workflowEventRoutes(): ApiRoute[] {
  return [
    { path: 'wait/:eventId', methods: { POST: wait } },
    { path: 'notify/:eventId', methods: { POST: notify } },
    { path: 'notify/:runId/:eventId', methods: { POST: notify } },
    { path: 'waiters/:eventId', methods: { GET: listWaiters } },
    {
      path: 'workflows/hooks/:userId/:runId/:eventId',
      methods: Object.fromEntries(WEBHOOK_METHODS.map((method) => [method, callWebhook])),
      public: true,
    },
  ];
}
