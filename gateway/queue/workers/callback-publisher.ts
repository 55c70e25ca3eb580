import { buildCallbackBody, buildCallbackMessage } from './callback-message.js';
import type { AttemptResult } from './http-delivery.js';
import type { QueueMessage } from '../core/message.js';
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
  await storeCallback(store, message, buildCallbackMessage(message.callback, body));
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
  await storeCallback(store, message, buildCallbackMessage(message.failureCallback, body));
}
