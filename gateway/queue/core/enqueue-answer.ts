import type { QueueMessage } from './message.js';

/** What a publish answers for one message: its id, or the id of the message it duplicates. */
export interface EnqueueAnswer {
  messageId: string;
  deduplicated: boolean;
}

/**
 * The answers of an enqueue script, which returns for each message either the id of the message
 * it duplicates or an empty string once it stored it.
 */
export function enqueueAnswers(
  messages: readonly QueueMessage[],
  duplicateOf: readonly string[],
): EnqueueAnswer[] {
  return messages.map((message, i) =>
    duplicateOf[i]
      ? { messageId: duplicateOf[i], deduplicated: true }
      : { messageId: message.id, deduplicated: false },
  );
}
