import { parseRetryDelayExpression } from '../core/retry-delay-expression.js';

/**
 * What happens after a failed delivery, as QStash does it, in pure functions:
 * - a message is retried at most `retries` times (Upstash-Retries, default 3);
 * - before retry n (1, 2, ...) it waits min(86400, e^(2.5n)) seconds, times the configured scale,
 *   unless Upstash-Retry-Delay gives an expression in `retried` (milliseconds);
 * - a Retry-After on the failed response wins over both, up to the cap (a day by default);
 * - status 489 with `Upstash-NonRetryable-Error: true` is never retried.
 */

export const NON_RETRYABLE_STATUS = 489;
export const NON_RETRYABLE_HEADER = 'upstash-nonretryable-error';

const BACKOFF_CAP_SECONDS = 86_400;

export interface RetryPolicyOptions {
  retryDelayScale: number;
  maxRetryDelayMs: number;
}

/** The failed attempt, as far as the retry decision needs it. */
export interface DeliveryFailure {
  /** HTTP status, when the destination answered at all. */
  status?: number;
  /** The response's Retry-After header. */
  retryAfter?: string;
  /** True for 489 + Upstash-NonRetryable-Error, and for destinations the SSRF guard refused. */
  nonRetryable: boolean;
}

export type FailureDecision =
  | { action: 'retry'; delayMs: number }
  | { action: 'dead-letter'; reason: 'retries-exhausted' | 'non-retryable' };

/** QStash's default backoff before retry number `retryNumber` (1 = the first retry). */
export function defaultBackoffMs(retryNumber: number, options: RetryPolicyOptions): number {
  const seconds = Math.min(BACKOFF_CAP_SECONDS, Math.exp(2.5 * retryNumber));
  return clampDelay(seconds * 1000 * options.retryDelayScale, options);
}

/** Retry-After as delta-seconds or an HTTP-date, in milliseconds from `now`; undefined if unreadable. */
export function parseRetryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date) || !/[a-z]/i.test(text)) return undefined;
  return Math.max(0, date - now);
}

export function isNonRetryableResponse(status: number, header: string | undefined): boolean {
  return status === NON_RETRYABLE_STATUS && header?.trim().toLowerCase() === 'true';
}

/**
 * Decides between another attempt and the dead-letter list. `retried` is the number of retries
 * already made before the attempt that just failed.
 */
export function decideAfterFailure(input: {
  message: { retries: number; retried: number; retryDelay?: string | undefined };
  failure: DeliveryFailure;
  options: RetryPolicyOptions;
  now: number;
}): FailureDecision {
  const { message, failure, options, now } = input;
  if (failure.nonRetryable) return { action: 'dead-letter', reason: 'non-retryable' };
  if (message.retried >= message.retries) return { action: 'dead-letter', reason: 'retries-exhausted' };
  const retryAfterMs = parseRetryAfterMs(failure.retryAfter, now);
  if (retryAfterMs !== undefined) return { action: 'retry', delayMs: clampDelay(retryAfterMs, options) };
  if (message.retryDelay !== undefined) {
    const delay = parseRetryDelayExpression(message.retryDelay).evaluate(message.retried);
    if (Number.isFinite(delay)) return { action: 'retry', delayMs: clampDelay(delay, options) };
  }
  return { action: 'retry', delayMs: defaultBackoffMs(message.retried + 1, options) };
}

function clampDelay(ms: number, options: RetryPolicyOptions): number {
  return Math.round(Math.min(Math.max(ms, 0), options.maxRetryDelayMs));
}
