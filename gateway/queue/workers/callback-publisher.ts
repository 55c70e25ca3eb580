import { buildCallbackBody, buildCallbackMessage } from './callback-message.js';
import type { AttemptResult } from './http-delivery.js';
import type { CallbackRequest, QueueMessage } from '../core/message.js';
import type { MessageStore } from '../stores/message-store.js';

/**
 * Publishes a message's callbacks from the worker that delivered it. Each is stored before the
 * attempt's outcome is, so a crash in between sends the callback again (with the redelivery)
 * rather than never: at least once, as every message. A queue's message's callback takes a slot
 * of that queue as it is stored, before the message gives its own back, so the queue's next
 * message waits for the callback as on QStash.
 */

async function storeCallback(
  store: MessageStore,
  source: QueueMessage,
  callback: QueueMessage,
): Promise<void> {
  if (source.queueName === undefined) {
    await store.enqueue([callback]);
    return;
  }
  await store.enqueueHoldingQueueSlot(source.queueName, { ...callback, holdsSlotOf: source.queueName });
}

/** The callback of `source` reporting `status` and the answer's headers and body. */
async function reportAnswer(
  store: MessageStore,
  source: QueueMessage,
  callback: CallbackRequest,
  result: AttemptResult & { status: number },
): Promise<void> {
  const body = buildCallbackBody({
    source,
    response: {
      status: result.status,
      headers: result.responseHeaders ?? {},
      body: result.responseBodyBytes ?? Buffer.alloc(0),
    },
  });
  await storeCallback(store, source, buildCallbackMessage(callback, body));
}

/**
 * Upstash-Callback: every answer of the destination, successful or not. A context.call request's
 * failed attempt is reported by {@link publishCallCallback} instead, which knows if it is the last.
 */
export async function publishCallback(
  store: MessageStore,
  message: QueueMessage,
  result: AttemptResult,
): Promise<void> {
  // A timeout or a refused connection has no answer to report.
  if (!message.callback || result.status === undefined) return;
  if (message.workflowCall && !result.ok) return;
  await reportAnswer(store, message, message.callback, { ...result, status: result.status });
}

/** Upstash-Failure-Callback: the message is dead-lettered (its last answer, if it had one). */
export async function publishFailureCallback(
  store: MessageStore,
  message: QueueMessage,
  result: AttemptResult,
  dlqId?: string,
): Promise<void> {
  if (!message.failureCallback) return;
  const body = buildCallbackBody({
    source: message,
    response: {
      status: result.status ?? 0,
      headers: result.responseHeaders ?? {},
      body: result.responseBodyBytes ?? Buffer.alloc(0),
    },
    ...(dlqId === undefined ? {} : { dlqId }),
  });
  const callback = buildCallbackMessage(message.failureCallback, body);
  // A run's failure callback: its outcome is the run's failureCallbackInfo (process-entry.ts).
  if (message.workflow !== undefined) callback.workflowFailureOf = { runId: message.workflow.runId };
  await storeCallback(store, message, callback);
}

/**
 * The status a context.call reports when its last attempt got no answer: the SDK's call step reads
 * only a status, headers and body, so a timeout is a 504 and a refused or failed connection a 502,
 * the statuses a proxy answers for them, with the error as the body.
 */
function noAnswer(result: AttemptResult): AttemptResult & { status: number } {
  const timedOut = result.error?.startsWith('ETIMEDOUT') === true;
  return {
    ...result,
    status: timedOut ? 504 : 502,
    responseHeaders: { 'content-type': ['text/plain'] },
    responseBodyBytes: Buffer.from(result.error ?? 'no answer', 'utf8'),
  };
}

/**
 * A failed attempt of context.call's request (message.ts `workflowCall`). One that will be retried
 * reports its answer as QStash does (the SDK waits for the last: `retried` below `maxRetries`). The
 * last attempt always reports, with `retried` = `maxRetries` so the SDK takes it even when the
 * message stops early (a refusal, a non-retryable answer), and a made-up answer when it got none:
 * without it the run would wait for its call forever.
 */
export async function publishCallCallback(
  store: MessageStore,
  message: QueueMessage,
  result: AttemptResult,
  last: boolean,
): Promise<void> {
  if (!message.callback) return;
  if (!last) {
    if (result.status !== undefined)
      await reportAnswer(store, message, message.callback, { ...result, status: result.status });
    return;
  }
  const answered = result.status === undefined ? noAnswer(result) : { ...result, status: result.status };
  await reportAnswer(store, { ...message, retried: message.retries }, message.callback, answered);
}
