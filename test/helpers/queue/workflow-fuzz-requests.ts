import fc from 'fast-check';
import { anyMethod, type FuzzRequest } from '../fuzz/http-fuzz.js';
import {
  DLQ_HEADERS,
  aimed,
  bodyOf,
  bodyOr,
  callbackStates,
  counts,
  freshRunId,
  headers,
  json,
  query,
  segment,
  states,
  times,
  waitBody,
  workflowHeaders,
  type FuzzTargets,
} from './workflow-fuzz-values.js';

/** The workflow routes the state fuzz aims at, each with how its requests are built (workflow-fuzz-values.ts). */

/** One route to aim at: its method and how its requests are built. */
export interface WorkflowFuzzRoute {
  name: string;
  method: string;
  /** The hook route takes no token. */
  tokenless?: boolean;
  request(targets: FuzzTargets): fc.Arbitrary<Omit<FuzzRequest, 'method'>>;
}

/** The workflow routes, each aimed at the runs of every state. */
export const WORKFLOW_FUZZ_ROUTES: WorkflowFuzzRoute[] = [
  {
    name: 'GET /v2/workflows/runs/:runId',
    method: 'GET',
    request: (t) =>
      fc.record({
        path: segment(t, t.runIds).map((id) => `/v2/workflows/runs/${id}`),
        headers: fc.constant({}),
      }),
  },
  {
    name: 'DELETE /v2/workflows/runs/:runId',
    method: 'DELETE',
    request: (t) =>
      fc.record({
        path: fc
          .tuple(
            segment(t, t.runIds),
            query(t, { cancel: fc.constantFrom('true', 'false', 'TRUE', '1', '') }),
          )
          .map(([id, q]) => `/v2/workflows/runs/${id}${q}`),
        headers: fc.constant({}),
        body: bodyOr(
          t,
          fc.constantFrom('"done"', '{"result":1}', '').map((s) => Buffer.from(s)),
        ),
      }),
  },
  {
    name: 'DELETE /v2/workflows/runs (cancel by ids and filters)',
    method: 'DELETE',
    request: (t) =>
      fc.record({
        path: query(t, {
          workflowRunIds: aimed(t, t.runIds),
          workflowUrl: fc.oneof(
            aimed(t, t.urls),
            aimed(t, t.urls).map((u) => u.slice(0, u.lastIndexOf('/'))),
          ),
          workflowUrlExactMatch: fc.constantFrom('true', 'false', 'yes'),
          label: aimed(t, t.labels),
          fromDate: times(t),
          toDate: times(t),
          flowControlKey: fc.constantFrom('fz', ''),
          count: counts,
        }).map((q) => `/v2/workflows/runs${q}`),
        headers: fc.constant({}),
        body: bodyOf(t),
      }),
  },
  {
    name: 'GET /v2/workflows/events (logs)',
    method: 'GET',
    request: (t) =>
      fc.record({
        path: query(t, {
          cursor: aimed(t, t.cursors),
          count: counts,
          workflowRunId: aimed(t, t.runIds),
          state: states,
          workflowUrl: aimed(t, t.urls),
          label: aimed(t, t.labels),
          fromDate: times(t),
          toDate: times(t),
          workflowCreatedAt: times(t),
          groupBy: fc.constantFrom('workflowRunId', 'x'),
        }).map((q) => `/v2/workflows/events${q}`),
        headers: fc.constant({}),
      }),
  },
  {
    name: 'POST /v2/wait/:eventId',
    method: 'POST',
    request: (t) =>
      fc.record({
        path: segment(t, t.events).map((e) => `/v2/wait/${e}`),
        headers: headers(t, { 'upstash-workflow-runid': aimed(t, t.runIds) }, [
          'Upstash-Workflow-RunId',
          'Content-Type',
        ]),
        body: bodyOr(t, waitBody(t)),
      }),
  },
  {
    name: 'POST /v2/notify/:eventId',
    method: 'POST',
    request: (t) =>
      fc.record({
        path: segment(t, t.events).map((e) => `/v2/notify/${e}`),
        headers: fc.constant({}),
        body: bodyOr(
          t,
          fc.constantFrom('{"paid":true}', 'x', '').map((s) => Buffer.from(s)),
        ),
      }),
  },
  {
    name: 'POST /v2/notify/:runId/:eventId',
    method: 'POST',
    request: (t) =>
      fc.record({
        path: fc.tuple(segment(t, t.runIds), segment(t, t.events)).map(([r, e]) => `/v2/notify/${r}/${e}`),
        headers: fc.constant({}),
        body: bodyOr(
          t,
          fc.constantFrom('{"paid":true}', '').map((s) => Buffer.from(s)),
        ),
      }),
  },
  {
    name: 'GET /v2/waiters/:eventId',
    method: 'GET',
    request: (t) =>
      fc.record({ path: segment(t, t.events).map((e) => `/v2/waiters/${e}`), headers: fc.constant({}) }),
  },
  {
    name: 'POST /v2/workflows/hooks/:userId/:runId/:eventId',
    method: 'POST',
    tokenless: true,
    request: (t) =>
      fc.record({
        path: fc
          .tuple(segment(t, [t.userId]), segment(t, t.runIds), segment(t, t.events))
          .map(([u, r, e]) => `/v2/workflows/hooks/${u}/${r}/${e}`),
        headers: headers(t, {}, ['Content-Type', 'X-Hook']),
        body: bodyOf(t),
      }),
  },
  ...(['GET /v2/workflows/dlq', 'GET /v2/dlq?source=workflow'] as const).map((name): WorkflowFuzzRoute => ({
    name,
    method: 'GET',
    request: (t) =>
      fc.record({
        path: query(t, {
          cursor: aimed(t, t.cursors),
          count: counts,
          workflowRunId: aimed(t, t.runIds),
          workflowUrl: aimed(t, t.urls),
          workflowCreatedAt: times(t),
          label: aimed(t, t.labels),
          fromDate: times(t),
          toDate: times(t),
          failureFunctionState: callbackStates,
          responseStatus: fc.constantFrom('500', '200', 'x'),
          ...(name.includes('source') && { source: fc.constantFrom('workflow', 'message', '') }),
        }).map((q) =>
          name.includes('source')
            ? `/v2/dlq${q === '' ? '?source=workflow' : `${q}&source=workflow`}`
            : `/v2/workflows/dlq${q}`,
        ),
        headers: fc.constant({}),
      }),
  })),
  ...(
    ['DELETE /v2/workflows/dlq', 'POST /v2/workflows/dlq/resume', 'POST /v2/workflows/dlq/restart'] as const
  ).map((name): WorkflowFuzzRoute => ({
    name,
    method: name.split(' ')[0]!,
    request: (t) =>
      fc.record({
        path: query(t, {
          dlqIds: aimed(t, t.dlqIds),
          count: counts,
          cursor: aimed(t, t.cursors),
          workflowRunId: aimed(t, t.runIds),
          workflowUrl: aimed(t, t.urls),
          label: aimed(t, t.labels),
          failureFunctionState: callbackStates,
          fromDate: times(t),
        }).map((q) => `${name.split(' ')[1]!}${q}`),
        headers: headers(t, { 'upstash-retries': fc.constantFrom('0', '1', '-1', 'x') }, DLQ_HEADERS),
        body: bodyOf(t),
      }),
  })),
  ...(['resume', 'restart'] as const).map((action): WorkflowFuzzRoute => ({
    name: `POST /v2/workflows/dlq/${action}/:dlqId`,
    method: 'POST',
    request: (t) =>
      fc.record({
        path: segment(t, t.dlqIds).map((id) => `/v2/workflows/dlq/${action}/${id}`),
        headers: headers(
          t,
          {
            'upstash-workflow-runid': fc.oneof(freshRunId, aimed(t, t.runIds)),
            'upstash-retries': fc.constantFrom('0', '2', 'x'),
          },
          DLQ_HEADERS,
        ),
        body: bodyOf(t),
      }),
  })),
  ...(['GET', 'DELETE'] as const).map((method): WorkflowFuzzRoute => ({
    name: `${method} /v2/workflows/dlq/:dlqId`,
    method,
    request: (t) =>
      fc.record({
        path: segment(t, t.dlqIds).map((id) => `/v2/workflows/dlq/${id}`),
        headers: fc.constant({}),
      }),
  })),
  ...(['POST', 'DELETE'] as const).map((method): WorkflowFuzzRoute => ({
    name: `${method} /v2/workflows/dlq/callback/:dlqId`,
    method,
    request: (t) =>
      fc.record({
        path: segment(t, t.dlqIds).map((id) => `/v2/workflows/dlq/callback/${id}`),
        headers: fc.constant({}),
      }),
  })),
  {
    name: 'POST /v2/publish/:url (trigger, step)',
    method: 'POST',
    request: (t) =>
      fc.record({
        path: aimed(t, t.urls).map((url) => `/v2/publish/${url}`),
        headers: workflowHeaders(t, fc.oneof(freshRunId, aimed(t, t.runIds))),
        body: bodyOr(
          t,
          fc.constantFrom('{"marker":"fz-new"}', '').map((s) => Buffer.from(s)),
        ),
      }),
  },
  {
    name: 'POST /v2/batch (trigger, step)',
    method: 'POST',
    request: (t) =>
      fc.record({
        path: fc.constant('/v2/batch'),
        headers: fc.constant({ 'content-type': 'application/json' }),
        body: bodyOr(
          t,
          fc
            .array(
              fc.record({
                destination: aimed(t, t.urls),
                headers: workflowHeaders(t, fc.oneof(freshRunId, aimed(t, t.runIds))),
                body: fc.constantFrom('{"marker":"fz-new"}', ''),
              }),
              { minLength: 1, maxLength: 3 },
            )
            .map(json),
        ),
      }),
  },
];

/** The route's method most of the time, another now and then. */
export const methodFor = (route: WorkflowFuzzRoute) =>
  fc.oneof({ arbitrary: fc.constant(route.method), weight: 5 }, anyMethod);
