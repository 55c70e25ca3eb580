import { flowControlFields } from './flow-control.js';
import { labelFields } from './list-query.js';
import type { QueueMessage } from './message.js';
import { redacted, redactHeaderLists, type RedactFields } from './redact-fields.js';

/** A message not yet delivered, as GET /v2/messages/{id} sees it. */
export interface PendingMessage {
  message: QueueMessage;
  /** Waiting for a due time (delayed, or a retry), or on the stream (queued or being delivered). */
  state: 'scheduled' | 'queued';
  /** When a scheduled message is due, epoch ms. */
  dueAt?: number;
}

/** A message as QStash's GET /v2/messages/{id} gives it (the SDK's `Message`). */
export interface MessageAnswer {
  messageId: string;
  url: string;
  method: string;
  header: Record<string, string[]>;
  body?: string;
  bodyBase64?: string;
  maxRetries: number;
  retryDelayExpression?: string;
  notBefore?: number;
  createdAt: number;
  label?: string;
  labels?: string[];
  /** The URL group it was published to, under both names the SDK's `Message` has. */
  urlGroup?: string;
  topicName?: string;
  /** The URL group endpoint's name, when it has one. */
  endpointName?: string;
  scheduleId?: string;
  queueName?: string;
  /** Upstash-Flow-Control-Key and its limits (period in seconds). */
  flowControlKey?: string;
  parallelism?: number;
  rate?: number;
  period?: number;
  /** The publisher's address. */
  callerIp?: string;
  /** Upstash-Callback's and Upstash-Failure-Callback's URLs. */
  callback?: string;
  failureCallback?: string;
}

/** The callback URLs of a message, as QStash's message fields name them. */
export function callbackFields(message: {
  callback?: { url: string } | undefined;
  failureCallback?: { url: string } | undefined;
}): { callback?: string; failureCallback?: string } {
  return {
    ...(message.callback !== undefined && { callback: message.callback.url }),
    ...(message.failureCallback !== undefined && { failureCallback: message.failureCallback.url }),
  };
}

/** The URL group (and endpoint), schedule and queue a message came from, in the answer's fields. */
export function originFields(origin: {
  topicName?: string | undefined;
  endpointName?: string | undefined;
  scheduleId?: string | undefined;
  queueName?: string | undefined;
}): {
  urlGroup?: string;
  topicName?: string;
  endpointName?: string;
  scheduleId?: string;
  queueName?: string;
} {
  return {
    ...(origin.topicName !== undefined && { urlGroup: origin.topicName, topicName: origin.topicName }),
    ...(origin.endpointName !== undefined && { endpointName: origin.endpointName }),
    ...(origin.scheduleId !== undefined && { scheduleId: origin.scheduleId }),
    ...(origin.queueName !== undefined && { queueName: origin.queueName }),
  };
}

/** The publisher's address, as QStash's message, DLQ and event answers name it. */
export function callerIpField(message: { callerIp?: string | undefined }): { callerIp?: string } {
  return message.callerIp === undefined ? {} : { callerIp: message.callerIp };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * QStash's rule: `body` when the bytes are UTF-8 text, `bodyBase64` otherwise; a redacted body is
 * `REDACTED:<SHA-256 hex>` in `body`.
 */
export function bodyFields(body: Buffer, redact?: RedactFields): { body: string } | { bodyBase64: string } {
  if (redact?.body) return { body: redacted(body) };
  try {
    return { body: UTF8.decode(body) };
  } catch {
    return { bodyBase64: body.toString('base64') };
  }
}

/** Header values as QStash lists them: each name, spelled as the client sent it, maps to its values. */
export function headerLists(
  headers: Readonly<Record<string, string>>,
  spelled: Readonly<Record<string, string>> = {},
): Record<string, string[]> {
  // A loop, not entries/map/fromEntries: every event of every message builds these.
  const lists: Record<string, string[]> = {};
  for (const name of Object.keys(headers)) lists[spelled[name] ?? name] = [headers[name]!];
  return lists;
}

export function buildMessageAnswer(pending: PendingMessage): MessageAnswer {
  const { message } = pending;
  const answer: MessageAnswer = {
    messageId: message.id,
    url: message.destination,
    method: message.method,
    header: redactHeaderLists(headerLists(message.headers, message.headerNames), message.redact),
    ...bodyFields(message.body, message.redact),
    maxRetries: message.retries,
    createdAt: message.createdAt,
    ...originFields(message),
    ...flowControlFields(message.flowControl),
    ...callbackFields(message),
    ...callerIpField(message),
  };
  if (message.retryDelay !== undefined) answer.retryDelayExpression = message.retryDelay;
  // Always there: the Python SDK's parser requires it. A message never delayed was due when created.
  answer.notBefore = pending.dueAt ?? message.notBefore ?? message.createdAt;
  Object.assign(answer, labelFields(message.label));
  return answer;
}
