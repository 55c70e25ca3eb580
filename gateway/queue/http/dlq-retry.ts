import type { ApiRequest } from './api-request.js';
import { parseCallbackRequest } from './publish/callback-headers.js';
import type { DeadLetter } from '../core/dead-letter.js';
import { InvalidRequestError } from '../core/errors.js';
import { newMessageId, type QueueMessage } from '../core/message.js';
import {
  parsePublishHeaders,
  publishLimitsOf,
  type HeaderBag,
  type PublishLimits,
  type PublishOptions,
} from './publish/publish-headers.js';
import { compileAddressPolicy, type AddressPolicy } from '../core/address-policy.js';

/** The publish settings a DLQ retry request sets itself; the rest come from the dead letter. */
export type RetryOverrides = Partial<PublishOptions & Pick<QueueMessage, 'callback' | 'failureCallback'>>;

/** A retry resends what is in the DLQ: there is no earlier publish to be a duplicate of. */
const NOT_ON_RETRY = ['upstash-deduplication-id', 'upstash-content-based-deduplication'];

const FORWARD_PREFIX = 'upstash-forward-';

/**
 * Reads the publish headers a retry request carries, each one checked as a publish checks it;
 * only those present override. Forwarded headers are added to (or replace) the stored ones.
 */
export function parseRetryOverrides(
  headers: HeaderBag,
  limits: PublishLimits,
  now = Date.now(),
  /** What callback URLs may be: the gateway's SSRF policy (default: public addresses only). */
  policy: AddressPolicy = compileAddressPolicy([]),
): RetryOverrides {
  for (const name of NOT_ON_RETRY)
    if (headers[name] !== undefined) throw new InvalidRequestError(`${name} does not apply to a DLQ retry`);
  const parsed = parsePublishHeaders(headers, limits, now);
  const has = (name: string) => headers[name] !== undefined;
  const overrides: RetryOverrides = {};
  if (has('upstash-method')) overrides.method = parsed.method;
  if (has('upstash-retries')) overrides.retries = parsed.retries;
  if (parsed.retryDelay !== undefined) overrides.retryDelay = parsed.retryDelay;
  if (parsed.timeoutMs !== undefined) overrides.timeoutMs = parsed.timeoutMs;
  if (parsed.notBefore !== undefined) overrides.notBefore = parsed.notBefore;
  if (parsed.label !== undefined) overrides.label = parsed.label;
  // QStash: "you can pass all configuration headers to override the configuration of the
  // original message"; a key given here replaces the dead letter's.
  if (parsed.flowControl !== undefined) overrides.flowControl = parsed.flowControl;
  const callback = parseCallbackRequest(headers, 'callback', limits, policy);
  if (callback) overrides.callback = callback;
  const failureCallback = parseCallbackRequest(headers, 'failure-callback', limits, policy);
  if (failureCallback) overrides.failureCallback = failureCallback;
  if (parsed.redact !== undefined) overrides.redact = parsed.redact;
  if (Object.keys(headers).some((name) => name.startsWith(FORWARD_PREFIX))) {
    const { 'content-type': _requestContentType, ...forwarded } = parsed.headers;
    overrides.headers = forwarded;
  }
  return overrides;
}

/**
 * The settings a message sent again keeps unless the retry request overrides them: a dead
 * letter's, or a restarted workflow run's (its WorkflowRunConfig).
 */
export type RetriedSettings = Pick<
  DeadLetter,
  'retries' | 'retryDelay' | 'timeoutMs' | 'label' | 'callback' | 'failureCallback' | 'redact' | 'flowControl'
>;

/** Sets each of `settings` on a message sent again, an override given by the request replacing it. */
export function applyRetryOverrides(
  message: QueueMessage,
  settings: RetriedSettings,
  overrides: RetryOverrides,
): QueueMessage {
  message.retries = overrides.retries ?? settings.retries;
  const retryDelay = overrides.retryDelay ?? settings.retryDelay;
  if (retryDelay !== undefined) message.retryDelay = retryDelay;
  const timeoutMs = overrides.timeoutMs ?? settings.timeoutMs;
  if (timeoutMs !== undefined) message.timeoutMs = timeoutMs;
  const label = overrides.label ?? settings.label;
  if (label !== undefined) message.label = label;
  if (overrides.notBefore !== undefined) message.notBefore = overrides.notBefore;
  const callback = overrides.callback ?? settings.callback;
  if (callback !== undefined) message.callback = callback;
  const failureCallback = overrides.failureCallback ?? settings.failureCallback;
  if (failureCallback !== undefined) message.failureCallback = failureCallback;
  const redact = overrides.redact ?? settings.redact;
  if (redact !== undefined) message.redact = redact;
  // It waits on its flow-control key again: the worker that reads it admits it there
  // (admit-flow-control-entry.ts), in its queue's slot if it has a queue.
  const flowControl = overrides.flowControl ?? settings.flowControl;
  if (flowControl !== undefined) message.flowControl = flowControl;
  return message;
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
    retries: letter.retries,
    retried: 0,
    createdAt: now,
  };
  // The retry's own override headers come through Node in lower case: the letter's spellings stay.
  if (letter.headerNames !== undefined) message.headerNames = letter.headerNames;
  // Sent again, it is still the message of its URL group endpoint, schedule or queue (it goes
  // back into its queue, as QStash's retry does, and waits for a slot there).
  if (letter.queueName !== undefined) message.queueName = letter.queueName;
  if (letter.topicName !== undefined) message.topicName = letter.topicName;
  if (letter.endpointName !== undefined) message.endpointName = letter.endpointName;
  if (letter.scheduleId !== undefined) message.scheduleId = letter.scheduleId;
  if (letter.callerIp !== undefined) message.callerIp = letter.callerIp;
  return applyRetryOverrides(message, letter, overrides);
}

/** The overrides a DLQ retry request's headers set, checked with the binding's publish limits and SSRF policy. */
export function retryOverridesOf(request: ApiRequest): RetryOverrides {
  return parseRetryOverrides(
    request.req.headers,
    publishLimitsOf(request.config, request.target),
    Date.now(),
    compileAddressPolicy(request.config.ssrfAllowlist),
  );
}
