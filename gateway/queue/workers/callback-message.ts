import { createMessage, type CallbackRequest, type QueueMessage } from '../core/message.js';

/**
 * A callback is a new message, signed and retried like any other, whose body is QStash's callback
 * body: the destination's answer (status, headers, base64 body) and the message it answered.
 */

/** The answer a callback reports. */
export interface CallbackResponse {
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

/** QStash's callback body (upstash/docs qstash/features/callbacks); the docs misspell sourceMessageId. */
export interface CallbackBody {
  status: number;
  header: Record<string, string[]>;
  body: string;
  retried: number;
  maxRetries: number;
  sourceMessageId: string;
  url: string;
  method: string;
  sourceHeader: Record<string, string[]>;
  sourceBody: string;
  createdAt: number;
  /** When the message was due (Upstash-Delay, Upstash-Not-Before), ms; absent when it was due at once. */
  notBefore?: number;
  /** Failure callbacks only: where the message lies in the dead-letter queue. */
  dlqId?: string;
  /** A workflow run's delivery (message.ts `workflow`): its run, which the SDK's failureFunction reads. */
  workflowRunId?: string;
  workflowCreatedAt?: number;
}

function headerLists(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string[]> {
  const lists: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    lists[name] = Array.isArray(value) ? value : [value];
  }
  return lists;
}

export function buildCallbackBody(input: {
  source: QueueMessage;
  response: CallbackResponse;
  dlqId?: string;
}): CallbackBody {
  const { source, response } = input;
  const body: CallbackBody = {
    status: response.status,
    header: headerLists(response.headers),
    body: response.body.toString('base64'),
    retried: source.retried,
    maxRetries: source.retries,
    sourceMessageId: source.id,
    url: source.destination,
    method: source.method,
    sourceHeader: headerLists(source.headers),
    sourceBody: source.body.toString('base64'),
    createdAt: source.createdAt,
  };
  if (source.notBefore !== undefined) body.notBefore = source.notBefore;
  if (input.dlqId !== undefined) body.dlqId = input.dlqId;
  if (source.workflow !== undefined) {
    body.workflowRunId = source.workflow.runId;
    body.workflowCreatedAt = source.workflow.createdAt;
    // The SDK's failureFunction takes sourceBody as the run's payload, not the steps delivered.
    if (source.workflow.initialBody !== undefined) body.sourceBody = source.workflow.initialBody;
  }
  return body;
}

/** The message that carries `body` to `callback`; it has no callback of its own. */
export function buildCallbackMessage(
  callback: CallbackRequest,
  body: CallbackBody,
  now = Date.now(),
): QueueMessage {
  const message = createMessage(
    {
      destination: callback.url,
      method: callback.method,
      headers: { 'content-type': 'application/json', ...callback.headers },
      body: Buffer.from(JSON.stringify(body), 'utf8'),
      retries: callback.retries,
    },
    now,
  );
  if (callback.retryDelay !== undefined) message.retryDelay = callback.retryDelay;
  if (callback.timeoutMs !== undefined) message.timeoutMs = callback.timeoutMs;
  if (callback.flowControl !== undefined) message.flowControl = callback.flowControl;
  return message;
}
