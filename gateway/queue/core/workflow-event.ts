import { parseQStashDuration } from '../../../api/qstash-duration.js';
import { InvalidRequestError } from './errors.js';

/**
 * context.waitForEvent and notify (docs/workflow.md "Events"): what the SDK sends to wait
 * (`POST /v2/wait/{eventId}`, src/context/steps.ts LazyWaitEventStep), the waiter the gateway
 * keeps, and the step a notify or the wait's timeout appends to the run, in the form the SDK's
 * LazyWaitForEventStep parses (`out` the event data in base64, `waitTimeout`). Nothing here
 * touches Redis.
 */

/** The wait step as the SDK describes it in the wait request's `step`. */
interface WaitStepInfo {
  stepId: number;
  stepName: string;
  stepType: string;
  concurrent: number;
  targetStep?: number;
}

/** One run waiting for one event (keys.ts workflowWaiters). */
export interface WorkflowWaiter {
  runId: string;
  eventId: string;
  /** The delayed message that times the wait out (never delivered itself). */
  timerId: string;
  /** Where the run resumes: its workflow URL. */
  url: string;
  /** The headers its resuming delivery carries: the wait request's Upstash-Forward-* and content type. */
  headers: Record<string, string>;
  /** When the wait times out, epoch ms. */
  deadline: number;
  timeoutUrl: string;
  timeoutHeaders: Record<string, string[]>;
  step: WaitStepInfo;
  /** When the wait began, epoch ms (absent on waiters stored before it was kept). */
  since?: number;
}

/**
 * The field of the run's hash (keys.ts workflowRun) that points at one of its waiters, valued the
 * event id: a run's waits are found from the run, never by reading every event's waiters.
 */
export const RUN_WAIT_FIELD_PREFIX = 'wait:';

export function runWaitField(timerId: string): string {
  return `${RUN_WAIT_FIELD_PREFIX}${timerId}`;
}

/** The body of `POST /v2/wait/{eventId}`, checked. */
export interface WaitRequest {
  url: string;
  timeoutMs: number;
  timeoutUrl: string;
  timeoutHeaders: Record<string, string[]>;
  step: WaitStepInfo;
}

const EVENT_ID = /^[A-Za-z0-9_.:@-]{1,256}$/;

/** An event id from a path: what the SDK's ids are made of (evt_..., or the user's own names). */
export function parseEventId(text: string): string {
  if (!EVENT_ID.test(text))
    throw new InvalidRequestError(
      `eventId ${JSON.stringify(text)} must be 1 to 256 letters, digits, '_', '.', ':', '@' or '-'`,
    );
  return text;
}

type Json = Record<string, unknown>;

/** `object`'s field named by the last part of `name` (`step.stepId` -> stepId); errors name it whole. */
function field(object: Json, name: string): unknown {
  return object[name.slice(name.lastIndexOf('.') + 1)];
}

function text(object: Json, name: string): string {
  const value = field(object, name);
  if (typeof value !== 'string' || value === '')
    throw new InvalidRequestError(`${name} must be a non-empty string`);
  return value;
}

function integer(object: Json, name: string, min: number): number {
  const value = field(object, name);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new InvalidRequestError(`${name} must be an integer of at least ${min}`);
  return value;
}

function headerLists(value: unknown, name: string): Record<string, string[]> {
  if (value === undefined) return {};
  const valid =
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => Array.isArray(v) && v.every((one) => typeof one === 'string'));
  if (!valid) throw new InvalidRequestError(`${name} must map header names to lists of strings`);
  return value as Record<string, string[]>;
}

function parseWaitTimeout(value: unknown, maxMs: number): number {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new InvalidRequestError('timeout must be a duration such as 30s, 5m or 7d');
  let ms: number;
  try {
    ms = parseQStashDuration(String(value));
  } catch {
    throw new InvalidRequestError(`timeout ${JSON.stringify(value)} is not a duration such as 30s, 5m or 7d`);
  }
  if (ms <= 0) throw new InvalidRequestError('timeout must be longer than 0');
  if (ms > maxMs)
    throw new InvalidRequestError(`timeout ${JSON.stringify(value)} is longer than ${maxMs} ms`);
  return ms;
}

/** The wait request's JSON body; a bad field is a 400 naming it. `maxTimeoutMs`: the binding's longest delay. */
export function parseWaitRequest(body: Buffer, maxTimeoutMs: number): WaitRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the wait request body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidRequestError('the wait request body must be a JSON object');
  const request = parsed as Json;
  const url = text(request, 'url');
  const step = request.step;
  if (typeof step !== 'object' || step === null || Array.isArray(step))
    throw new InvalidRequestError('step must be an object');
  const stepJson = step as Json;
  const info: WaitStepInfo = {
    stepId: integer(stepJson, 'step.stepId', 1),
    stepName: text(stepJson, 'step.stepName'),
    stepType: text(stepJson, 'step.stepType'),
    concurrent: integer(stepJson, 'step.concurrent', 1),
  };
  if (stepJson.targetStep !== undefined) info.targetStep = integer(stepJson, 'step.targetStep', 0);
  const timeoutUrl = request.timeoutUrl === undefined ? url : text(request, 'timeoutUrl');
  return {
    url,
    timeoutMs: parseWaitTimeout(request.timeout, maxTimeoutMs),
    timeoutUrl,
    timeoutHeaders: headerLists(request.timeoutHeaders, 'timeoutHeaders'),
    step: info,
  };
}

/**
 * The step a wait ends with, as the run's next step publish would carry it: notified, `out` is the
 * event's data in base64 (LazyWaitForEventStep decodes it); timed out, no `out` and `waitTimeout`.
 */
export function waitStepBody(waiter: WorkflowWaiter, outcome: { data: Buffer } | { timedOut: true }): Buffer {
  const step: Json = { ...waiter.step, waitEventId: waiter.eventId };
  if ('data' in outcome) {
    step.out = outcome.data.toString('base64');
    step.waitTimeout = false;
  } else {
    step.waitTimeout = true;
  }
  return Buffer.from(JSON.stringify(step), 'utf8');
}

/** A waiter as client.getWaiters and a notify answer show it (the SDK's `Waiter`; deadline in seconds). */
export function waiterAnswer(waiter: WorkflowWaiter): Json {
  const headers: Record<string, string[]> = {
    'Upstash-Workflow-Runid': [waiter.runId],
    'Upstash-Workflow-Url': [waiter.url],
  };
  for (const [name, value] of Object.entries(waiter.headers)) headers[name] = [value];
  return {
    url: waiter.url,
    headers,
    deadline: Math.floor(waiter.deadline / 1000),
    timeoutUrl: waiter.timeoutUrl,
    timeoutHeaders: waiter.timeoutHeaders,
  };
}

/** One notified waiter in a notify's answer (the SDK's `NotifyResponse`). */
export function notifiedAnswer(waiter: WorkflowWaiter, messageId: string, runCreatedAt: number): Json {
  return {
    waiter: waiterAnswer(waiter),
    messageId,
    workflowRunId: waiter.runId,
    workflowCreatedAt: runCreatedAt,
  };
}
