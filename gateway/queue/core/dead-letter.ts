import { randomBytes } from 'node:crypto';
import type { FlowControl } from './flow-control.js';
import type { CallbackRequest, QueueMessage } from './message.js';
import type { RedactFields } from './redact-fields.js';

/** The messageId of the dead letter of a stream entry whose message could not be decoded. */
export const UNREADABLE_MESSAGE_ID = 'unreadable';

/** Why a message ended in the dead-letter queue. */
export type DeadLetterReason = 'retries-exhausted' | 'non-retryable' | 'destination-refused' | 'unreadable';

/** A dead letter as stored (JSON) in a binding's dead-letter queue. */
export interface DeadLetter {
  /** `<failedAt, 13 digits>-<hex>`: sorts by failure time, so the queue is paged and trimmed in order. */
  dlqId: string;
  messageId: string;
  destination: string;
  method: string;
  /** The headers the deliveries carried (forwarded ones and Content-Type; no signature). */
  headers: Record<string, string>;
  /** The client's spelling of header names (QueueMessage.headerNames). */
  headerNames?: Record<string, string>;
  /** The body, base64: bodies are bytes, not necessarily text. */
  bodyBase64: string;
  /** Retries the message was allowed (Upstash-Retries). */
  retries: number;
  retryDelay?: string;
  timeoutMs?: number;
  label?: string;
  /** The publisher's address (QueueMessage.callerIp). */
  callerIp?: string;
  /** Kept so a DLQ retry sends its answers where the first publish asked. */
  callback?: CallbackRequest;
  failureCallback?: CallbackRequest;
  /** Upstash-Topic-Name: the URL group it was published to. */
  topicName?: string;
  endpointName?: string;
  /** Upstash-Schedule-Id: the schedule whose tick created it. */
  scheduleId?: string;
  /** The queue it was enqueued in. */
  queueName?: string;
  /** Its Upstash-Flow-Control-Key and limits, for the DLQ's answers and filters. */
  flowControl?: FlowControl;
  redact?: RedactFields;
  /** A step of a workflow run (the workflow DLQ's entries): its run. */
  workflow?: { runId: string; createdAt: number };
  /** A run's failure callback (QueueMessage.workflowFailureOf), sent again by retryFailureFunction. */
  workflowFailureOf?: { runId: string };
  retried: number;
  createdAt: number;
  failedAt: number;
  reason: DeadLetterReason;
  /** The status of the last attempt, when the destination answered. */
  lastStatus?: number;
  /** What went wrong on the last attempt when there was no answer (timeout, refused, ...). */
  lastError?: string;
  /** The start of the last response's body, for diagnosis. */
  lastResponseBody?: string;
  /** The last response's headers. */
  lastResponseHeaders?: Record<string, string[]>;
}

const TIME_DIGITS = 13;
export const DLQ_ID_PATTERN = /^\d{13}-[0-9a-f]{8}$/;

export function newDeadLetterId(failedAt: number): string {
  return `${String(failedAt).padStart(TIME_DIGITS, '0')}-${randomBytes(4).toString('hex')}`;
}

/** The smallest dlqId of a letter that failed at or after `time`: dlqIds below it are older. */
export function deadLetterIdFloor(time: number): string {
  return `${String(Math.max(0, time)).padStart(TIME_DIGITS, '0')}-`;
}

export function buildDeadLetter(input: {
  message: QueueMessage;
  reason: DeadLetterReason;
  failedAt: number;
  lastStatus?: number | undefined;
  lastError?: string | undefined;
  lastResponseBody?: string | undefined;
  lastResponseHeaders?: Record<string, string[]> | undefined;
}): DeadLetter {
  const { message } = input;
  const letter: DeadLetter = {
    dlqId: newDeadLetterId(input.failedAt),
    messageId: message.id,
    destination: message.destination,
    method: message.method,
    headers: message.headers,
    bodyBase64: message.body.toString('base64'),
    retries: message.retries,
    retried: message.retried,
    createdAt: message.createdAt,
    failedAt: input.failedAt,
    reason: input.reason,
  };
  if (message.headerNames !== undefined) letter.headerNames = message.headerNames;
  if (message.retryDelay !== undefined) letter.retryDelay = message.retryDelay;
  if (message.timeoutMs !== undefined) letter.timeoutMs = message.timeoutMs;
  if (message.label !== undefined) letter.label = message.label;
  if (message.callerIp !== undefined) letter.callerIp = message.callerIp;
  if (message.callback !== undefined) letter.callback = message.callback;
  if (message.failureCallback !== undefined) letter.failureCallback = message.failureCallback;
  if (message.topicName !== undefined) letter.topicName = message.topicName;
  if (message.endpointName !== undefined) letter.endpointName = message.endpointName;
  if (message.scheduleId !== undefined) letter.scheduleId = message.scheduleId;
  if (message.queueName !== undefined) letter.queueName = message.queueName;
  if (message.flowControl !== undefined) letter.flowControl = message.flowControl;
  if (message.redact !== undefined) letter.redact = message.redact;
  // Not its initialBody: the run keeps it.
  if (message.workflow !== undefined)
    letter.workflow = { runId: message.workflow.runId, createdAt: message.workflow.createdAt };
  if (message.workflowFailureOf !== undefined) letter.workflowFailureOf = message.workflowFailureOf;
  if (input.lastStatus !== undefined) letter.lastStatus = input.lastStatus;
  if (input.lastError !== undefined) letter.lastError = input.lastError;
  if (input.lastResponseBody !== undefined) letter.lastResponseBody = input.lastResponseBody;
  if (input.lastResponseHeaders !== undefined) letter.lastResponseHeaders = input.lastResponseHeaders;
  return letter;
}
