import type { QueueTarget } from './binding-registry.js';
import type { QueueConfig } from './config.js';
import { labelFields, type EventState } from './list-query.js';
import { headerLists } from './message-answer.js';
import type { QueueMessage } from './message.js';
import { redacted, redactHeaderLists } from './redact-fields.js';

/**
 * One state change of a message, as GET /v2/events gives it: QStash's log entry (its OpenAPI
 * `LogEntry`, the SDK's `Log`), with the message's own fields on every event.
 */
export interface MessageEvent {
  /** Epoch ms. */
  time: number;
  state: EventState;
  messageId: string;
  url: string;
  method?: string;
  /** The delivered headers, name -> values; redacted ones as `REDACTED:<sha256>`. */
  header?: Record<string, string[]>;
  /**
   * The body's first EVENT_BODY_BYTES, base64; a redacted body is `REDACTED:<sha256 of all of it>`;
   * none for a workflow run's delivery (addMembersOf).
   */
  body?: string;
  maxRetries?: number;
  retryDelayExpression?: string;
  /** Upstash-Timeout, ms. */
  timeout?: number;
  callback?: string;
  callbackHeaders?: Record<string, string[]>;
  failureCallback?: string;
  failureCallbackHeaders?: Record<string, string[]>;
  /** The URL group it was published to (the SDK's `urlGroup`). */
  topicName?: string;
  /** The URL group endpoint's name, when it has one. */
  endpointName?: string;
  scheduleId?: string;
  /** The queue it was enqueued on (/v2/enqueue). */
  queueName?: string;
  flowControlKey?: string;
  label?: string;
  labels?: string[];
  /** The publisher's address. */
  callerIp?: string;
  /** Why the attempt failed (ERROR, FAILED). */
  error?: string;
  /**
   * The attempt's answer: its status (ERROR, FAILED, and the receiver's 2xx on DELIVERED); headers
   * and its body's first bytes, base64 (ERROR, FAILED).
   */
  responseStatus?: number;
  responseHeaders?: Record<string, string[]>;
  responseBody?: string;
  /** When the next attempt is due (RETRY, and CREATED of a delayed message), epoch ms. */
  nextDeliveryTime?: number;
}

/** What an event says beyond the message: the attempt's outcome or the next due time. */
export interface EventDetails {
  error?: string | undefined;
  responseStatus?: number | undefined;
  responseHeaders?: Record<string, string[]> | undefined;
  responseBody?: Buffer | undefined;
  nextDeliveryTime?: number | undefined;
}

/**
 * How much of a message's (and a failed answer's) body each event keeps. QStash's events carry the
 * whole body; Settee's carry its start, since every message leaves three or more events behind
 * (CREATED, ACTIVE, DELIVERED...) and a body may be 1 MiB: with the default cap of 100,000 events
 * a binding's events then stay under about 140 MiB.
 */
export const EVENT_BODY_BYTES = 1_024;

/**
 * The message's part of every event, added to `fields` (the event's own, which come first). Built
 * afresh for each event: remembering it per message object in a WeakMap cost a publish (one event
 * per message) more than building it (about 2.5 of 10 us), and saved a delivery's two events next
 * to nothing.
 */
function addMembersOf(message: EventMessage, fields: Partial<MessageEvent>): void {
  fields.url = message.destination;
  if (message.method !== undefined) fields.method = message.method;
  if (message.headers !== undefined)
    fields.header = redactHeaderLists(headerLists(message.headers, message.headerNames), message.redact);
  // A workflow run's delivery carries the run's steps so far (up to 64 KiB, rebuilt for each step),
  // not a body of its own: its events name the run (the Upstash-Workflow-RunId header) instead, as
  // QStash's workflow message logs name the step and not the body; the steps are the run's
  // (GET /v2/workflows/runs/{runId}). Copied into its three events, that list was about 60% of
  // what a finished run left in Redis (docs/workflow.md, Measured).
  if (message.body !== undefined && message.body.length > 0 && message.workflow === undefined)
    fields.body = message.redact?.body
      ? redacted(message.body)
      : message.body.subarray(0, EVENT_BODY_BYTES).toString('base64');
  if (message.retries !== undefined) fields.maxRetries = message.retries;
  if (message.retryDelay !== undefined) fields.retryDelayExpression = message.retryDelay;
  if (message.timeoutMs !== undefined) fields.timeout = message.timeoutMs;
  if (message.callback !== undefined) {
    fields.callback = message.callback.url;
    fields.callbackHeaders = headerLists(message.callback.headers);
  }
  if (message.failureCallback !== undefined) {
    fields.failureCallback = message.failureCallback.url;
    fields.failureCallbackHeaders = headerLists(message.failureCallback.headers);
  }
  if (message.topicName !== undefined) fields.topicName = message.topicName;
  if (message.endpointName !== undefined) fields.endpointName = message.endpointName;
  if (message.scheduleId !== undefined) fields.scheduleId = message.scheduleId;
  if (message.queueName !== undefined) fields.queueName = message.queueName;
  if (message.flowControl !== undefined) fields.flowControlKey = message.flowControl.key;
  if (message.label !== undefined) Object.assign(fields, labelFields(message.label));
  if (message.callerIp !== undefined) fields.callerIp = message.callerIp;
}

/** A message as events describe it: its id and destination, and what else is known of it. */
export type EventMessage = Pick<QueueMessage, 'id' | 'destination'> & Partial<Omit<QueueMessage, 'id'>>;

/**
 * False for a workflow wait's timer: the gateway's own, not a published message. QStash keeps a
 * wait server-side and logs no message for it, so its creation, cancel and end are no events.
 */
export function hasEvents(message: Pick<QueueMessage, 'workflowWait'>): boolean {
  return message.workflowWait === undefined;
}

const NO_DETAILS: EventDetails = Object.freeze({});

/** The event's JSON as the scripts store it on the events stream. */
export function eventJson(
  message: EventMessage,
  state: EventState,
  time: number,
  details: EventDetails = NO_DETAILS,
): string {
  const own: Partial<MessageEvent> = { time, state, messageId: message.id };
  if (details.error !== undefined) own.error = details.error;
  if (details.responseStatus !== undefined) own.responseStatus = details.responseStatus;
  if (details.responseHeaders !== undefined) own.responseHeaders = details.responseHeaders;
  if (details.responseBody !== undefined && details.responseBody.length > 0)
    own.responseBody = details.responseBody.subarray(0, EVENT_BODY_BYTES).toString('base64');
  if (details.nextDeliveryTime !== undefined) own.nextDeliveryTime = details.nextDeliveryTime;
  // One object, one stringify: its string is flat, where two stringified halves joined were a
  // rope that ioredis copied flat again for each script call (docs/queue.md, Performance).
  addMembersOf(message, own);
  return JSON.stringify(own);
}

/** How many events a binding keeps, or 0 when the gateway records none (SETTEE_QUEUE_RECORD_EVENTS). */
export function eventCapOf(
  config: Pick<QueueConfig, 'recordEvents'>,
  target: Pick<QueueTarget, 'limits'>,
): number {
  return config.recordEvents ? target.limits.maxEvents : 0;
}
