import { labelsOf } from './list-query.js';
import type { PendingMessage } from './pending-messages.js';

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
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** QStash's rule: `body` when the bytes are UTF-8 text, `bodyBase64` otherwise. */
export function bodyFields(body: Buffer): { body: string } | { bodyBase64: string } {
  try {
    return { body: UTF8.decode(body) };
  } catch {
    return { bodyBase64: body.toString('base64') };
  }
}

/** Header values as QStash lists them: each name maps to its values. */
export function headerLists(headers: Readonly<Record<string, string>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
}

export function buildMessageAnswer(pending: PendingMessage): MessageAnswer {
  const { message } = pending;
  const answer: MessageAnswer = {
    messageId: message.id,
    url: message.destination,
    method: message.method,
    header: headerLists(message.headers),
    ...bodyFields(message.body),
    maxRetries: message.retries,
    createdAt: message.createdAt,
  };
  if (message.retryDelay !== undefined) answer.retryDelayExpression = message.retryDelay;
  const notBefore = pending.dueAt ?? message.notBefore;
  if (notBefore !== undefined) answer.notBefore = notBefore;
  if (message.label !== undefined) {
    answer.label = message.label;
    answer.labels = labelsOf(message.label);
  }
  return answer;
}
