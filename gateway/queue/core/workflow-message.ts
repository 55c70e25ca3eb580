import { randomUUID } from 'node:crypto';
import type { CallbackRequest, WorkflowPublish } from './message.js';
import type { FlowControl } from './flow-control.js';
import { InvalidRequestError } from './errors.js';

/**
 * What makes a publish a workflow message, and what the workflow endpoint reads off each delivery.
 * The Upstash Workflow SDK (1.3.3, src/qstash/headers.ts) publishes every step through QStash with
 * raw `Upstash-Workflow-*` headers that QStash itself reads: which run, whether it starts the run
 * (Init), the workflow URL. Nothing here touches Redis.
 */

export const WORKFLOW_RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'] as const;
/** A run's state as client.logs() reports it (`workflowState`). */
export type WorkflowRunState = (typeof WORKFLOW_RUN_STATES)[number];

/**
 * A run's delivery settings, fixed by its trigger: the SDK puts retries, retry delay, flow control,
 * failure callback and the user's headers on the trigger only (headers.ts adds them when
 * `workflowConfig` has them, which only the trigger's has), and QStash applies them to every step.
 */
export interface WorkflowRunConfig {
  url: string;
  /** Delivered with every step: the trigger's Upstash-Forward-* headers and content type. */
  headers: Record<string, string>;
  retries: number;
  retryDelay?: string;
  flowControl?: FlowControl;
  failureCallback?: CallbackRequest;
  label?: string;
  /** The run that started this one with context.invoke, resumed when this one ends. */
  invoker?: WorkflowInvoker;
}

/** The run that invoked another, kept with the invoked run's settings. */
export interface WorkflowInvoker {
  runId: string;
  /** The invoker's workflow URL, where it resumes. */
  url: string;
  /** Its resuming delivery's headers: the invoke request's Upstash-Forward-* and content type. */
  headers: Record<string, string>;
  /** The invoke step as the SDK sent it (stepId, stepName, stepType, concurrent...). */
  step: Record<string, unknown>;
}

/** One run as stored (keys.ts workflowRun). */
export interface WorkflowRunRecord {
  runId: string;
  config: WorkflowRunConfig;
  state: WorkflowRunState;
  createdAt: number;
  finishedAt?: number;
  /** What the run returned (the SDK's DELETE body), as sent. */
  response?: string;
  /** The failed step's last answer or error (JSON: dlqId, status, error, body), for a RUN_FAILED run. */
  failure?: string;
  /**
   * A failed run's failure callback: how it went, its own dead letter once it failed, and the
   * message it was sent again as (retryFailureFunction) while that is in progress.
   */
  callback?: { state: FailureCallbackState; dlqId?: string; messageId?: string };
  /** The waiters the run's hash points at (`wait:<timer id>` = event id; workflow-event.ts). */
  waits?: { timerId: string; eventId: string }[];
}

/** QStash's failureFunctionState / failureCallbackInfo.state of a failed run's failure callback. */
export const FAILURE_CALLBACK_STATES = [
  'CALLBACK_INPROGRESS',
  'CALLBACK_SUCCESS',
  'CALLBACK_FAIL',
  'CALLBACK_CANCELED',
] as const;
export type FailureCallbackState = (typeof FAILURE_CALLBACK_STATES)[number];

/**
 * One step as the SDK's parser reads it (workflow-parser.ts processRawSteps): the first is the
 * initial payload, the others a step's JSON; both base64 in `body`. `createdAt` is ours, for logs.
 */
export interface RawStep {
  messageId: string;
  body: string;
  callType: 'step';
  createdAt: number;
}

/** A run id the gateway makes (a DLQ resume or restart): as the SDK makes them, `wfr_` and a random id. */
export function newWorkflowRunId(): string {
  return `wfr_${randomUUID()}`;
}

/** The header that makes a publish a workflow's (a trigger or a step of the run it names). */
export const WORKFLOW_RUN_ID_HEADER = 'upstash-workflow-runid';

const RUN_ID = /^wfr_[A-Za-z0-9_.-]{1,200}$/;

/** A run id as the SDK makes them and the gateway takes them: `wfr_` and letters, digits, -, _ or . */
export function isWorkflowRunId(value: string): boolean {
  return RUN_ID.test(value);
}

type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

function single(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The workflow headers of a publish, or undefined for a plain message. `headers` have lower-case
 * names. A run id the SDK would never send, or a workflow message without its URL, is refused.
 */
export function parseWorkflowPublish(headers: HeaderBag): WorkflowPublish | undefined {
  const runId = single(headers, WORKFLOW_RUN_ID_HEADER);
  if (runId === undefined) return undefined;
  if (!isWorkflowRunId(runId))
    throw new InvalidRequestError(
      `Upstash-Workflow-RunId ${JSON.stringify(runId)} is not a workflow run id (wfr_ followed by letters, digits, -, _ or .)`,
    );
  const url = single(headers, 'upstash-workflow-url');
  if (url === undefined || url === '')
    throw new InvalidRequestError('Upstash-Workflow-Url is required with Upstash-Workflow-RunId');
  const init = single(headers, 'upstash-workflow-init');
  if (init !== undefined && init !== 'true' && init !== 'false')
    throw new InvalidRequestError(`Upstash-Workflow-Init ${JSON.stringify(init)} is not true or false`);
  const publish: WorkflowPublish = { runId, init: init === 'true', url };
  const callType = single(headers, 'upstash-workflow-calltype');
  if (callType !== undefined) publish.callType = callType;
  if (single(headers, 'upstash-workflow-invoke') === 'true') publish.invoke = true;
  return publish;
}

/** context.call's outbound request: an ordinary message to the called URL, not a step of the run. */
export function isCallRequest(publish: WorkflowPublish): boolean {
  return publish.callType === 'toCallback';
}

/**
 * How the SDK's parser tells one step from another (deduplicateSteps, workflow-parser.ts): its
 * stepId, or for a parallel group's plan step (stepId 0) its targetStep. A body that is no step
 * JSON is told apart by its message id.
 */
export function stepIdentity(step: RawStep): string {
  try {
    const parsed = JSON.parse(Buffer.from(step.body, 'base64').toString('utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && 'stepId' in parsed) {
      const { stepId, targetStep } = parsed as { stepId: unknown; targetStep?: unknown };
      if (stepId === 0) return `plan:${String(targetStep ?? 0)}`;
      if (typeof stepId === 'number') return `step:${stepId}`;
    }
  } catch {
    // Not JSON: the message id below.
  }
  return `message:${step.messageId}`;
}

export function buildRawStep(messageId: string, body: Buffer, createdAt: number): RawStep {
  return { messageId, body: body.toString('base64'), callType: 'step', createdAt };
}

/**
 * The headers QStash sets on a run's deliveries, which the SDK reads (serve/index.ts): the run id,
 * its creation time, and its label (context.label).
 */
export function workflowDeliveryHeaders(
  runId: string,
  createdAt: number,
  config: WorkflowRunConfig,
): Record<string, string> {
  const headers: Record<string, string> = {
    [WORKFLOW_RUN_ID_HEADER]: runId,
    'upstash-workflow-createdat': String(createdAt),
    'upstash-workflow-url': config.url,
  };
  if (config.label !== undefined) headers['upstash-label'] = config.label;
  return headers;
}
