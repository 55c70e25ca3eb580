import { DomainError } from '../../domain-error.js';

/**
 * The queue's domain errors. Each carries a `code` and the HTTP status it maps to;
 * `sendQueueFailure` (http/queue-failure.ts) is the one place they become QStash-style `{"error": "..."}`.
 */
export type QueueErrorCode =
  | 'INVALID_REQUEST'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'QUEUE_NOT_FOUND'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'STORE_UNAVAILABLE'
  | 'DESTINATION_REFUSED'
  | 'KEY_ROTATION_PENDING'
  | 'KEY_ROTATION_TIMEOUT'
  | 'QUOTA_EXCEEDED'
  | 'RATE_LIMITED'
  | 'INTERNAL';

export abstract class QueueError extends DomainError<QueueErrorCode> {
  abstract readonly status: number;
}

/** Bad input: nothing is stored. */
export class InvalidRequestError extends QueueError {
  readonly code = 'INVALID_REQUEST';
  readonly status = 400;
}

/**
 * A body over its limit (SETTEE_QUEUE_MAX_BODY_BYTES, _BATCH_BYTES): 413, as QStash answers a
 * message over its plan's size; nothing is stored.
 */
export class RequestBodyTooLargeError extends QueueError {
  readonly code = 'PAYLOAD_TOO_LARGE';
  readonly status = 413;
  constructor() {
    super('request body is too large');
  }
}

/** The client went away before its body was whole; nothing is stored. */
export class RequestAbortedError extends InvalidRequestError {
  constructor() {
    super('the request was aborted');
  }
}

export class UnauthorizedError extends QueueError {
  readonly code = 'UNAUTHORIZED';
  readonly status = 401;
}

export class QueueNotFoundError extends QueueError {
  readonly code = 'QUEUE_NOT_FOUND';
  readonly status = 404;
}

/** A message or dead letter the binding does not hold (never had, or no longer). */
export class MessageNotFoundError extends QueueError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
}

/** A known route asked with a method it does not take; `allow` is its Allow header. */
export class MethodNotAllowedError extends QueueError {
  readonly code = 'METHOD_NOT_ALLOWED';
  readonly status = 405;
  constructor(readonly allow: readonly string[]) {
    super(`method not allowed: this route takes ${allow.join(', ')}`);
  }
}

/** The binding's database did not take the message; nothing was acknowledged to the client. */
export class StoreUnavailableError extends QueueError {
  readonly code = 'STORE_UNAVAILABLE';
  readonly status = 503;
}

/** A URL group, schedule or queue the binding does not have. */
export class ResourceNotFoundError extends QueueError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
}

/** Over one of the binding's count quotas (queues, schedules, URL groups, endpoints): QStash answers 412. */
export class QuotaExceededError extends QueueError {
  readonly code = 'QUOTA_EXCEEDED';
  readonly status = 412;
}

/**
 * A bad item in a workflow's step batch (a parallel group's steps, context.call's request), the run
 * already started: 412, as the run limits answer, which the SDK (context.addStep) makes a
 * WorkflowNonRetryableError, so the run fails and its failure callback hears why. A 400 there it
 * takes as "the run was cancelled" and stops silently (triggerRouteFunction). Nothing is stored.
 */
export class WorkflowStepRefusedError extends QueueError {
  readonly code = 'INVALID_REQUEST';
  readonly status = 412;
}

/**
 * Over one of the binding's rate limits (spec.limits.maxMessagesPerDay, maxRequestsPerSecond):
 * 429 with the headers QStash sends, which the SDK reads into QstashDailyRatelimitError or
 * QstashRatelimitError, and Retry-After; nothing is stored.
 */
export class RateLimitedError extends QueueError {
  readonly code = 'RATE_LIMITED';
  readonly status = 429;
  constructor(
    message: string,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

/** POST /v2/keys/rotate while a rotation requested earlier is not answered by the operator yet. */
export class KeyRotationPendingError extends QueueError {
  readonly code = 'KEY_ROTATION_PENDING';
  readonly status = 409;
}

/** The rotation is requested, but the operator did not publish the keys in time to answer with them. */
export class KeyRotationTimeoutError extends QueueError {
  readonly code = 'KEY_ROTATION_TIMEOUT';
  readonly status = 504;
}

/**
 * The SSRF guard refused a destination: a scheme other than http(s), or an address that is not
 * public unicast and not allowlisted. At publish time it is a 400; at delivery it dead-letters.
 */
export class DestinationRefusedError extends QueueError {
  readonly code = 'DESTINATION_REFUSED';
  readonly status = 400;
  constructor(
    readonly destination: string,
    readonly reason: string,
  ) {
    super(`destination ${destination} is refused: ${reason}`);
  }
}
