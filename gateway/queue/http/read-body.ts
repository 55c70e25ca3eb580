import type http from 'node:http';
import { readLimitedBody, type BodyRefusals } from '../../http/limited-body.js';
import { RequestAbortedError, RequestBodyTooLargeError } from '../core/errors.js';

/** A refused body: 413 when too large, 400 when cut off. */
const QUEUE_REFUSALS: BodyRefusals = {
  tooLarge: () => new RequestBodyTooLargeError(),
  aborted: () => new RequestAbortedError(),
};

/** Reads a queue request's whole body, up to `limit` bytes (gateway/http/limited-body.ts). */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return readLimitedBody(req, limit, QUEUE_REFUSALS);
}
