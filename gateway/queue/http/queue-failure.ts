import type http from 'node:http';
import type { Logger } from 'winston';
import { QueueError, RateLimitedError } from '../core/errors.js';
import { sendJson } from './json-response.js';

/** Maps anything thrown while serving a queue request to a status and a message safe to show the client. */
export function toQueueHttpError(err: unknown): { status: number; message: string } {
  if (err instanceof QueueError) return { status: err.status, message: err.message };
  return { status: 500, message: 'internal error' };
}

/**
 * Answers `{"error": message}`. When the request's body has not all arrived (refused before it was
 * read: a wrong token, an unknown queue, a declared length over the limit), the connection closes
 * after the answer; kept alive, node:http would first read and discard the rest, maybe megabytes.
 */
export function sendQueueError(res: http.ServerResponse, status: number, message: string): void {
  if (!res.req.complete) res.shouldKeepAlive = false;
  sendJson(res, status, { error: message });
}

/**
 * Answers a failed queue request. When the answer has already begun there is no honest one left:
 * the connection is cut.
 */
export function sendQueueFailure(
  res: http.ServerResponse,
  err: unknown,
  context: { logger: Logger; binding: string },
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, message } = toQueueHttpError(err);
  if (err instanceof RateLimitedError)
    for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  if (status >= 500) {
    // The path is left out: it carries the destination, whose query string may hold a secret.
    context.logger.error('queue request failed', {
      binding: context.binding,
      status,
      error: err instanceof Error ? err.message : String(err),
    });
  }
  sendQueueError(res, status, message);
}
