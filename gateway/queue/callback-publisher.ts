import { buildCallbackBody, buildCallbackMessage } from './callback-message.js';
import type { AttemptResult } from './http-delivery.js';
import type { QueueMessage } from './message.js';
import type { MessageStore } from './message-store.js';

/**
 * Publishes a message's callbacks from the worker that delivered it. Each is stored before the
 * attempt's outcome is, so a crash in between sends the callback again (with the redelivery)
 * rather than never: at least once, as every message.
 */

/** Upstash-Callback: every answer of the destination, successful or not. */
export async function publishCallback(
  store: MessageStore,
  message: QueueMessage,
  result: AttemptResult,
): Promise<void> {
  // A timeout or a refused connection has no answer to report.
  if (!message.callback || result.status === undefined) return;
  const body = buildCallbackBody({
    source: message,
    response: {
      status: result.status,
      headers: result.responseHeaders ?? {},
      body: result.responseBodyBytes ?? Buffer.alloc(0),
    },
  });
  await store.enqueue([buildCallbackMessage(message.callback, body)]);
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
  await store.enqueue([buildCallbackMessage(message.failureCallback, body)]);
}
