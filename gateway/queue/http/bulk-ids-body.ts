import type http from 'node:http';
import { InvalidRequestError } from '../core/errors.js';
import { readBody } from './read-body.js';

/** The largest bulk body read: 100,000 ids of about 30 bytes. */
const MAX_BULK_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The ids of a bulk route's JSON body, as QStash's docs and the Python SDK send them
 * (`DELETE /v2/dlq {"dlqIds": [...]}`, `DELETE /v2/messages {"messageIds": [...]}`); undefined
 * when there is no body. A body that names nothing (`{}`, an empty list), a field other than
 * `field`, or a body that is not a JSON object is a 400: a bulk delete must never read a body it
 * does not understand as "no selection", which the routes would widen to every message.
 */
export async function readBulkIdsBody(
  req: http.IncomingMessage,
  field: 'dlqIds' | 'messageIds',
): Promise<string[] | undefined> {
  const raw = await readBody(req, MAX_BULK_BODY_BYTES);
  if (raw.toString('utf8').trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidRequestError(`the body must be a JSON object such as {"${field}": ["..."]}`);
  for (const name of Object.keys(body))
    if (name !== field) throw new InvalidRequestError(`unknown body field ${JSON.stringify(name)}`);
  const ids = (body as Record<string, unknown>)[field];
  if (ids === undefined)
    throw new InvalidRequestError(`the body names nothing: body field ${field} is missing`);
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && id !== ''))
    throw new InvalidRequestError(`body field ${field} must be an array of ids`);
  if (ids.length === 0)
    throw new InvalidRequestError(`body field ${field} is empty: it names nothing to act on`);
  return ids as string[];
}
