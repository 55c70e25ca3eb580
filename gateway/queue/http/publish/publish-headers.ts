import type http from 'node:http';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import {
  formatQStashDuration,
  parseQStashDuration as parseDurationText,
} from '../../../../api/qstash-duration.js';
import { InvalidRequestError } from '../../core/errors.js';
import { parseFlowControlHeaders } from '../../core/flow-control.js';
import type { MessageRequest } from '../../core/message.js';
import { parseRedactFields } from '../../core/redact-fields.js';
import { InvalidRetryDelayError, parseRetryDelayExpression } from '../../core/retry-delay-expression.js';

/**
 * Turns a publish's Upstash-* headers (a request's, or a batch item's `headers`) into message
 * options. What the queue cannot honour is refused with a 400 rather than silently ignored: a
 * delayed or deduplicated message that is delivered at once, or twice, would be a lie.
 */

export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

export type PublishOptions = Pick<
  MessageRequest,
  | 'method'
  | 'headers'
  | 'headerNames'
  | 'retries'
  | 'retryDelay'
  | 'timeoutMs'
  | 'notBefore'
  | 'label'
  | 'redact'
  | 'flowControl'
>;

export interface PublishLimits {
  defaultRetries: number;
  maxRetries: number;
  /** The binding's limits.maxTimeout, in ms. */
  maxTimeoutMs: number;
  /** The binding's limits.maxDelay, in ms. */
  maxDelayMs: number;
}

/** What a publish to `target` may ask for: the gateway's retry settings and the binding's limits. */
export function publishLimitsOf(
  config: Pick<PublishLimits, 'defaultRetries' | 'maxRetries'>,
  target: { limits: Pick<PublishLimits, 'maxTimeoutMs' | 'maxDelayMs'> },
): PublishLimits {
  const { defaultRetries, maxRetries } = config;
  const { maxTimeoutMs, maxDelayMs } = target.limits;
  return { defaultRetries, maxRetries, maxTimeoutMs, maxDelayMs };
}

const MAX_LABEL_LENGTH = 256;

const FORWARD_PREFIX = 'upstash-forward-';
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** Headers a publisher cannot forward: they describe the connection, not the message. */
const NOT_FORWARDABLE = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'expect',
]);

/** QStash features this queue does not have; a publish that asks for one gets a 400. */
const UNSUPPORTED = new Map([
  [
    'upstash-queue-name',
    'Upstash-Queue-Name belongs on POST /v2/schedules/{destination}; enqueue with POST /v2/enqueue/{queue}/{destination}',
  ],
  ['upstash-cron', 'Upstash-Cron belongs on POST /v2/schedules/{destination}, which creates a schedule'],
]);

export function single(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The parsers below take the header's name for their 400s: callbacks have their own (Upstash-Callback-Retries). */
export function parseRetries(
  value: string | undefined,
  limits: PublishLimits,
  name = 'Upstash-Retries',
): number {
  if (value === undefined) return limits.defaultRetries;
  const text = value.trim();
  if (!/^\d+$/.test(text))
    throw new InvalidRequestError(`${name} ${JSON.stringify(value)} is not a whole number`);
  const retries = Number(text);
  if (retries > limits.maxRetries)
    throw new InvalidRequestError(`${name} ${retries} is more than the allowed ${limits.maxRetries}`);
  return retries;
}

export function parseRetryDelay(value: string | undefined, name = 'Upstash-Retry-Delay'): string | undefined {
  if (value === undefined) return undefined;
  try {
    parseRetryDelayExpression(value);
  } catch (err) {
    if (err instanceof InvalidRetryDelayError)
      throw new InvalidRequestError(err.message.replace(/^Upstash-Retry-Delay/, name), { cause: err });
    throw err;
  }
  return value;
}

/** QStash durations: `10s`, `1m`, `2d`, `500ms`, or bare seconds. */
function parseQStashDuration(name: string, value: string): number {
  try {
    return parseDurationText(value);
  } catch (err) {
    throw new InvalidRequestError(
      `${name} ${JSON.stringify(value)} is not a duration such as 10s, 5m, 1h or 2d`,
      {
        cause: err,
      },
    );
  }
}

/**
 * The first delivery's earliest time, epoch ms, or undefined for at once. Upstash-Not-Before
 * (unix seconds) wins over Upstash-Delay when both are set, as in QStash.
 */
function parseNotBefore(headers: HeaderBag, limits: PublishLimits, now: number): number | undefined {
  const notBefore = single(headers, 'upstash-not-before');
  const delay = single(headers, 'upstash-delay');
  if (notBefore === undefined && delay === undefined) return undefined;
  const limit = `the queue's maximum delay of ${formatQStashDuration(limits.maxDelayMs)} (QueueBinding spec.limits.maxDelay)`;
  if (notBefore !== undefined) {
    const text = notBefore.trim();
    if (!/^\d+$/.test(text))
      throw new InvalidRequestError(
        `Upstash-Not-Before ${JSON.stringify(notBefore)} is not a unix time in seconds`,
      );
    const at = Number(text) * 1000;
    if (!Number.isSafeInteger(at) || at - now > limits.maxDelayMs)
      throw new InvalidRequestError(`Upstash-Not-Before ${text} is further ahead than ${limit}`);
    return at > now ? at : undefined;
  }
  if (delay === undefined) return undefined;
  const ms = parseQStashDuration('Upstash-Delay', delay);
  if (ms > limits.maxDelayMs)
    throw new InvalidRequestError(`Upstash-Delay ${delay.trim()} is longer than ${limit}`);
  return ms > 0 ? now + ms : undefined;
}

function parseLabel(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const label = value.trim();
  if (label === '' || label.length > MAX_LABEL_LENGTH)
    throw new InvalidRequestError(`Upstash-Label must have 1 to ${MAX_LABEL_LENGTH} characters`);
  return label;
}

export function parseTimeout(
  value: string | undefined,
  limits: PublishLimits,
  name = 'Upstash-Timeout',
): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseQStashDuration(name, value);
  if (ms <= 0) throw new InvalidRequestError(`${name} must be longer than 0`);
  if (ms > limits.maxTimeoutMs) {
    throw new InvalidRequestError(
      `${name} ${value.trim()} is longer than the queue's maximum timeout of ${formatQStashDuration(limits.maxTimeoutMs)} (QueueBinding spec.limits.maxTimeout)`,
    );
  }
  return ms;
}

export function parseMethod(value: string | undefined, name = 'Upstash-Method'): string {
  if (value === undefined) return 'POST';
  const method = value.trim().toUpperCase();
  if (!METHODS.has(method))
    throw new InvalidRequestError(
      `${name} ${JSON.stringify(value)} is not one of ${[...METHODS].join(', ')}`,
    );
  return method;
}

function checkUnsupported(headers: HeaderBag): void {
  for (const [name, message] of UNSUPPORTED) {
    if (headers[name] !== undefined) throw new InvalidRequestError(message);
  }
}

/**
 * Refuses a header that node:http would refuse to send: a name that is not an RFC 9110 token, or a
 * value with CR, LF, NUL or another control character. Taken as given, every attempt would fail
 * and the message end dead-lettered for what was a bad publish. `publishedAs` names the header as
 * the publisher sent it.
 */
function checkDeliverable(publishedAs: string, name: string, value: string): void {
  try {
    validateHeaderName(name);
  } catch (err) {
    throw new InvalidRequestError(
      `header ${JSON.stringify(publishedAs)}: ${JSON.stringify(name)} is not a valid HTTP header name`,
      { cause: err },
    );
  }
  try {
    validateHeaderValue(name, value);
  } catch (err) {
    throw new InvalidRequestError(
      `header ${JSON.stringify(publishedAs)} has a value with characters HTTP does not allow (CR, LF, NUL or another control character)`,
      { cause: err },
    );
  }
}

/** The headers named `<prefix><X>`, as `<X>`: Upstash-Forward-* for the message, Upstash-Callback-Forward-* for its callback. */
export function forwardedHeaders(headers: HeaderBag, prefix = FORWARD_PREFIX): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    if (!name.startsWith(prefix)) continue;
    const target = name.slice(prefix.length);
    const value = single(headers, name);
    if (target === '' || value === undefined || NOT_FORWARDABLE.has(target)) continue;
    checkDeliverable(name, target, value);
    forwarded[target] = value;
  }
  return forwarded;
}

/**
 * The client's spelling of the delivered header names it did not send in lower case, from the
 * names as sent (`Upstash-Forward-Test-Header` -> `test-header`: `Test-Header`); undefined when
 * there is none.
 */
function spellingsOf(
  sentNames: readonly string[],
  delivered: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const spelled: Record<string, string> = {};
  for (const sent of sentNames) {
    const lower = sent.toLowerCase();
    // Only Upstash-Forward-* and Content-Type are delivered; the request's own Authorization is not.
    const name = lower.startsWith(FORWARD_PREFIX)
      ? sent.slice(FORWARD_PREFIX.length)
      : lower === 'content-type'
        ? sent
        : undefined;
    if (name !== undefined && delivered[name.toLowerCase()] !== undefined && name !== name.toLowerCase())
      spelled[name.toLowerCase()] = name;
  }
  return Object.keys(spelled).length > 0 ? spelled : undefined;
}

/** The header names of a request as the client spelled them. */
export function sentHeaderNames(req: http.IncomingMessage): string[] {
  return req.rawHeaders.filter((_, i) => i % 2 === 0);
}

/**
 * `headers` must have lower-case names, as Node and the SDK's batch items give them; `sentNames`
 * are the names as the client spelled them, kept for the answers that list headers.
 */
export function parsePublishHeaders(
  headers: HeaderBag,
  limits: PublishLimits,
  now = Date.now(),
  sentNames: readonly string[] = [],
): PublishOptions {
  checkUnsupported(headers);
  const delivered = forwardedHeaders(headers);
  const contentType = single(headers, 'content-type');
  if (contentType !== undefined) {
    checkDeliverable('content-type', 'content-type', contentType);
    delivered['content-type'] = contentType;
  }
  const options: PublishOptions = {
    method: parseMethod(single(headers, 'upstash-method')),
    headers: delivered,
    retries: parseRetries(single(headers, 'upstash-retries'), limits),
  };
  const headerNames = spellingsOf(sentNames, delivered);
  if (headerNames !== undefined) options.headerNames = headerNames;
  const retryDelay = parseRetryDelay(single(headers, 'upstash-retry-delay'));
  if (retryDelay !== undefined) options.retryDelay = retryDelay;
  const timeoutMs = parseTimeout(single(headers, 'upstash-timeout'), limits);
  if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
  const notBefore = parseNotBefore(headers, limits, now);
  if (notBefore !== undefined) options.notBefore = notBefore;
  const label = parseLabel(single(headers, 'upstash-label'));
  if (label !== undefined) options.label = label;
  const redact = parseRedactFields(single(headers, 'upstash-redact-fields'));
  if (redact !== undefined) options.redact = redact;
  const flowControl = parseFlowControlHeaders(
    single(headers, 'upstash-flow-control-key'),
    single(headers, 'upstash-flow-control-value'),
  );
  if (flowControl !== undefined) options.flowControl = flowControl;
  return options;
}

/** Lower-cases the names of a batch item's headers (the SDK already does; curl users may not). */
export function lowerCaseHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const lowered: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = value;
  return lowered;
}
