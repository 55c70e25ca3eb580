import type { DeadLetter } from './dead-letter.js';
import { flowControlFields } from './flow-control.js';
import { labelFields } from './list-query.js';
import {
  bodyFields,
  callbackFields,
  callerIpField,
  headerLists,
  originFields,
  type MessageAnswer,
} from './message-answer.js';
import { redactHeaderLists } from './redact-fields.js';

/** A dead letter as QStash's DLQ API gives it (the SDK's `DlqMessage`). */
export interface DeadLetterAnswer extends MessageAnswer {
  dlqId: string;
  responseStatus?: number;
  responseHeader?: Record<string, string[]>;
  responseBody?: string;
  /** Why the message was dead-lettered, when there was no response (timeout, refused, ...). Settee's own field. */
  error?: string;
}

export function buildDeadLetterAnswer(letter: DeadLetter): DeadLetterAnswer {
  const answer: DeadLetterAnswer = {
    messageId: letter.messageId,
    url: letter.destination,
    method: letter.method,
    header: redactHeaderLists(headerLists(letter.headers, letter.headerNames), letter.redact),
    ...bodyFields(Buffer.from(letter.bodyBase64, 'base64'), letter.redact),
    maxRetries: letter.retries,
    // The Python SDK's parser requires it; a letter keeps no due time of its own.
    notBefore: letter.createdAt,
    createdAt: letter.createdAt,
    dlqId: letter.dlqId,
    ...originFields(letter),
    ...flowControlFields(letter.flowControl),
    ...callbackFields(letter),
    ...callerIpField(letter),
  };
  if (letter.retryDelay !== undefined) answer.retryDelayExpression = letter.retryDelay;
  Object.assign(answer, labelFields(letter.label));
  if (letter.lastStatus !== undefined) answer.responseStatus = letter.lastStatus;
  if (letter.lastResponseHeaders !== undefined) answer.responseHeader = letter.lastResponseHeaders;
  if (letter.lastResponseBody !== undefined) answer.responseBody = letter.lastResponseBody;
  if (letter.lastError !== undefined) answer.error = letter.lastError;
  return answer;
}
