import {
  decideAfterFailure,
  defaultBackoffMs,
  isNonRetryableResponse,
  parseRetryAfterMs,
  type RetryPolicyOptions,
} from '../../../../gateway/queue/workers/retry-policy.js';

const qstash: RetryPolicyOptions = { retryDelayScale: 1, maxRetryDelayMs: 86_400_000 };
const now = Date.parse('2025-01-01T00:00:00Z');
const failure = { status: 500, nonRetryable: false };

describe('the retry policy', () => {
  it("when the default backoff is computed, then it follows QStash's min(86400, e^(2.5n)) seconds", () => {
    expect(defaultBackoffMs(1, qstash)).toBe(Math.round(Math.exp(2.5) * 1000)); // 12 s
    expect(defaultBackoffMs(2, qstash)).toBe(Math.round(Math.exp(5) * 1000)); // 2 min 28 s
    expect(defaultBackoffMs(3, qstash)).toBe(Math.round(Math.exp(7.5) * 1000)); // 30 min 8 s
    expect(defaultBackoffMs(5, qstash)).toBe(86_400_000);
    expect(defaultBackoffMs(9, qstash)).toBe(86_400_000);
  });

  it('when a delay scale is configured, then the default backoff shrinks by it', () => {
    expect(defaultBackoffMs(1, { ...qstash, retryDelayScale: 0.001 })).toBe(Math.round(Math.exp(2.5)));
  });

  it('when retries remain and nothing else is said, then the next retry waits the default backoff of its number', () => {
    expect(
      decideAfterFailure({ message: { retries: 3, retried: 0 }, failure, options: qstash, now }),
    ).toEqual({
      action: 'retry',
      delayMs: defaultBackoffMs(1, qstash),
    });
    expect(
      decideAfterFailure({ message: { retries: 3, retried: 2 }, failure, options: qstash, now }),
    ).toEqual({
      action: 'retry',
      delayMs: defaultBackoffMs(3, qstash),
    });
  });

  it('when the message has used all its retries, then it is dead-lettered', () => {
    expect(
      decideAfterFailure({ message: { retries: 3, retried: 3 }, failure, options: qstash, now }),
    ).toEqual({
      action: 'dead-letter',
      reason: 'retries-exhausted',
    });
    expect(
      decideAfterFailure({ message: { retries: 0, retried: 0 }, failure, options: qstash, now }).action,
    ).toBe('dead-letter');
  });

  it('when Upstash-Retry-Delay is set, then its expression in retried gives the delay in milliseconds', () => {
    const message = { retries: 5, retryDelay: 'pow(2, retried) * 1000' };
    expect(
      decideAfterFailure({ message: { ...message, retried: 0 }, failure, options: qstash, now }),
    ).toEqual({ action: 'retry', delayMs: 1000 });
    expect(
      decideAfterFailure({ message: { ...message, retried: 3 }, failure, options: qstash, now }),
    ).toEqual({ action: 'retry', delayMs: 8000 });
  });

  it('when the expression gives a negative or huge delay, then it is clamped to zero or the cap', () => {
    const options = { ...qstash, maxRetryDelayMs: 60_000 };
    expect(
      decideAfterFailure({ message: { retries: 5, retried: 0, retryDelay: '0 - 5' }, failure, options, now }),
    ).toEqual({ action: 'retry', delayMs: 0 });
    expect(
      decideAfterFailure({
        message: { retries: 5, retried: 0, retryDelay: 'exp(100)' },
        failure,
        options,
        now,
      }),
    ).toEqual({
      action: 'retry',
      delayMs: 60_000,
    });
  });

  it('when the response has Retry-After, then it wins over the backoff and the expression, up to a day', () => {
    const message = { retries: 3, retried: 0, retryDelay: '1000' };
    expect(
      decideAfterFailure({ message, failure: { ...failure, retryAfter: '7' }, options: qstash, now }),
    ).toEqual({ action: 'retry', delayMs: 7000 });
    expect(
      decideAfterFailure({ message, failure: { ...failure, retryAfter: '604800' }, options: qstash, now }),
    ).toEqual({
      action: 'retry',
      delayMs: 86_400_000,
    });
    const date = new Date(now + 30_000).toUTCString();
    expect(
      decideAfterFailure({ message, failure: { ...failure, retryAfter: date }, options: qstash, now }),
    ).toEqual({ action: 'retry', delayMs: 30_000 });
  });

  it('when Retry-After is unreadable, then it is ignored', () => {
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-5', now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs(' 3 ', now)).toBe(3000);
  });

  it('when the failure is non-retryable, then it is dead-lettered even with retries left', () => {
    expect(
      decideAfterFailure({
        message: { retries: 3, retried: 0 },
        failure: { status: 489, nonRetryable: true },
        options: qstash,
        now,
      }),
    ).toEqual({
      action: 'dead-letter',
      reason: 'non-retryable',
    });
  });

  it('when a response is 489 with Upstash-NonRetryable-Error: true, then it is non-retryable, and only then', () => {
    expect(isNonRetryableResponse(489, 'true')).toBe(true);
    expect(isNonRetryableResponse(489, 'TRUE ')).toBe(true);
    expect(isNonRetryableResponse(489, undefined)).toBe(false);
    expect(isNonRetryableResponse(489, 'false')).toBe(false);
    expect(isNonRetryableResponse(500, 'true')).toBe(false);
  });
});
