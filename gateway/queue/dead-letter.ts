import type { QueueMessage } from './message.js';

/** The messageId of the dead letter of a stream entry whose message could not be decoded. */
export const UNREADABLE_MESSAGE_ID = 'unreadable';

/** Why a message ended on the dead-letter list. */
export type DeadLetterReason = 'retries-exhausted' | 'non-retryable' | 'destination-refused' | 'unreadable';

/** A dead letter as stored (JSON) on a binding's dead-letter list. */
export interface DeadLetter {
  messageId: string;
  destination: string;
  method: string;
  /** The headers the deliveries carried (forwarded ones and Content-Type; no signature). */
  headers: Record<string, string>;
  /** The body, base64: bodies are bytes, not necessarily text. */
  bodyBase64: string;
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
}

export function buildDeadLetter(input: {
  message: QueueMessage;
  reason: DeadLetterReason;
  failedAt: number;
  lastStatus?: number | undefined;
  lastError?: string | undefined;
  lastResponseBody?: string | undefined;
}): DeadLetter {
  const { message } = input;
  const letter: DeadLetter = {
    messageId: message.id,
    destination: message.destination,
    method: message.method,
    headers: message.headers,
    bodyBase64: message.body.toString('base64'),
    retried: message.retried,
    createdAt: message.createdAt,
    failedAt: input.failedAt,
    reason: input.reason,
  };
  if (input.lastStatus !== undefined) letter.lastStatus = input.lastStatus;
  if (input.lastError !== undefined) letter.lastError = input.lastError;
  if (input.lastResponseBody !== undefined) letter.lastResponseBody = input.lastResponseBody;
  return letter;
}
