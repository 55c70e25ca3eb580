import type { DeadLetter } from './dead-letter.js';
import { newMessageId, type QueueMessage } from './message.js';
import {
  parsePublishHeaders,
  type HeaderBag,
  type PublishLimits,
  type PublishOptions,
} from './publish-headers.js';

/** The publish settings a DLQ retry request sets itself; the rest come from the dead letter. */
export type RetryOverrides = Partial<PublishOptions>;

const FORWARD_PREFIX = 'upstash-forward-';

/**
 * Reads the publish headers a retry request carries, each one checked as a publish checks it;
 * only those present override. Forwarded headers are added to (or replace) the stored ones.
 */
export function parseRetryOverrides(
  headers: HeaderBag,
  limits: PublishLimits,
  now = Date.now(),
): RetryOverrides {
  const parsed = parsePublishHeaders(headers, limits, now);
  const has = (name: string) => headers[name] !== undefined;
  const overrides: RetryOverrides = {};
  if (has('upstash-method')) overrides.method = parsed.method;
  if (has('upstash-retries')) overrides.retries = parsed.retries;
  if (parsed.retryDelay !== undefined) overrides.retryDelay = parsed.retryDelay;
  if (parsed.timeoutMs !== undefined) overrides.timeoutMs = parsed.timeoutMs;
  if (parsed.notBefore !== undefined) overrides.notBefore = parsed.notBefore;
  if (parsed.label !== undefined) overrides.label = parsed.label;
  if (Object.keys(headers).some((name) => name.startsWith(FORWARD_PREFIX))) {
    const { 'content-type': _requestContentType, ...forwarded } = parsed.headers;
    overrides.headers = forwarded;
  }
  return overrides;
}

/** The new message a dead letter is sent again as: a new id, no retries made yet. */
export function buildRetriedMessage(
  letter: DeadLetter,
  overrides: RetryOverrides,
  now: number,
): QueueMessage {
  const message: QueueMessage = {
    id: newMessageId(),
    destination: letter.destination,
    method: overrides.method ?? letter.method,
    headers: { ...letter.headers, ...overrides.headers },
    body: Buffer.from(letter.bodyBase64, 'base64'),
    retries: overrides.retries ?? letter.retries,
    retried: 0,
    createdAt: now,
  };
  const retryDelay = overrides.retryDelay ?? letter.retryDelay;
  if (retryDelay !== undefined) message.retryDelay = retryDelay;
  const timeoutMs = overrides.timeoutMs ?? letter.timeoutMs;
  if (timeoutMs !== undefined) message.timeoutMs = timeoutMs;
  const label = overrides.label ?? letter.label;
  if (label !== undefined) message.label = label;
  if (overrides.notBefore !== undefined) message.notBefore = overrides.notBefore;
  return message;
}
