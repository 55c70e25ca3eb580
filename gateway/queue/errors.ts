import type { ErrorRequestHandler, Response } from 'express';
import type { Logger } from 'winston';
import { DomainError } from '../domain-error.js';

/**
 * The queue's domain errors. Each carries a `code` and the HTTP status it maps to; the router's
 * error handler (`queueErrorHandler`) is the one place they become QStash-style `{"error": "..."}`.
 */
export type QueueErrorCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  | 'QUEUE_NOT_FOUND'
  | 'STORE_UNAVAILABLE'
  | 'DESTINATION_REFUSED'
  | 'INTERNAL';

export abstract class QueueError extends DomainError<QueueErrorCode> {
  abstract readonly status: number;
}

/** Bad input: nothing is stored. */
export class InvalidRequestError extends QueueError {
  readonly code = 'INVALID_REQUEST';
  readonly status = 400;
}

export class UnauthorizedError extends QueueError {
  readonly code = 'UNAUTHORIZED';
  readonly status = 401;
}

export class QueueNotFoundError extends QueueError {
  readonly code = 'QUEUE_NOT_FOUND';
  readonly status = 404;
}

/** The binding's database did not take the message; nothing was acknowledged to the client. */
export class StoreUnavailableError extends QueueError {
  readonly code = 'STORE_UNAVAILABLE';
  readonly status = 503;
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

interface HttpParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** Maps anything thrown in the router to a status and a message safe to show the client. */
export function toQueueHttpError(err: unknown): { status: number; message: string } {
  if (err instanceof QueueError) return { status: err.status, message: err.message };
  const parser = err as HttpParserError | null;
  // body-parser's own errors (express.raw): a body over the limit is bad input, as QStash answers.
  if (parser?.type === 'entity.too.large') return { status: 400, message: 'request body is too large' };
  if (parser?.expose && typeof parser.status === 'number' && parser.status < 500) {
    return { status: 400, message: (err as Error).message };
  }
  return { status: 500, message: 'internal error' };
}

export function sendQueueError(res: Response, status: number, message: string): void {
  res.status(status).json({ error: message });
}

export function queueErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const { status, message } = toQueueHttpError(err);
    if (status >= 500) {
      // The path is left out: it carries the destination, whose query string may hold a secret.
      logger.error('queue request failed', {
        binding: `${String(req.params.namespace)}/${String(req.params.name)}`,
        status,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    sendQueueError(res, status, message);
  };
}
