import type { ApiHandler, ApiRequest } from './api-request.js';
import { InvalidRequestError, MessageNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import { hasFilters, matchesFilters, MESSAGE_FILTERS, parseListQuery, labelsOf } from '../core/list-query.js';
import { buildMessageAnswer } from '../core/message-answer.js';
import { eventCapOf } from '../core/message-event.js';
import { PendingMessages } from '../stores/pending-messages.js';
import { queueWakeupsOf } from '../stores/queue-store.js';
import { readBody } from './read-body.js';
import { storeCall } from './store-call.js';

/**
 * QStash's messages API on a binding's pending messages (delayed, queued, being delivered or
 * waiting for a retry; delivered and dead-lettered messages are no longer messages):
 *   GET    /v2/messages/{id}   the message, or 404
 *   DELETE /v2/messages/{id}   cancels it: {cancelled: 1}, or 404
 *   DELETE /v2/messages        cancels by messageIds, by filters, or all: {cancelled: n}
 */

const NO_QUERY = { filters: [] } as const;

function pending(request: ApiRequest): PendingMessages {
  const { redis, keys, config } = request;
  return new PendingMessages(
    redis,
    keys,
    eventCapOf(config, request.target),
    queueWakeupsOf(redis, keys, config),
  );
}

function messageId(request: ApiRequest): string {
  return request.params.id ?? '';
}

export const getMessage: ApiHandler = async (request) => {
  parseListQuery(request.query, NO_QUERY);
  const id = messageId(request);
  const found = await storeCall('read the message', () => pending(request).find(id));
  if (!found) throw new MessageNotFoundError(`message ${id} not found`);
  sendJson(request.res, 200, buildMessageAnswer(found));
};

export const cancelMessage: ApiHandler = async (request) => {
  parseListQuery(request.query, NO_QUERY);
  const id = messageId(request);
  const cancelled = await storeCall('cancel the message', () => pending(request).cancel([id]));
  if (cancelled === 0) throw new MessageNotFoundError(`message ${id} not found`);
  // QStash documents an empty 202; SDK 2.12's messages.cancel(id) parses a JSON body.
  sendJson(request.res, 200, { cancelled });
};

/**
 * The message ids of an older SDK's bulk cancel, which sent them as a JSON body
 * (`{"messageIds": [...]}`, QStash's bulk-cancel docs) rather than in the query; undefined when
 * the body is empty. An empty object names no ids: every message, as no body does.
 */
function bodyMessageIds(raw: Buffer): string[] | undefined {
  if (raw.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new InvalidRequestError('the body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidRequestError('the body must be a JSON object such as {"messageIds": ["msg_..."]}');
  for (const field of Object.keys(body))
    if (field !== 'messageIds') throw new InvalidRequestError(`unknown body field ${JSON.stringify(field)}`);
  const ids = (body as { messageIds?: unknown }).messageIds;
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && id !== ''))
    throw new InvalidRequestError('body field messageIds must be an array of message ids');
  return ids as string[];
}

/** The largest bulk-cancel body read: 100,000 ids of about 30 bytes. */
const MAX_CANCEL_BODY_BYTES = 4 * 1024 * 1024;

/**
 * By ids, what is cancelled is counted exactly. By filters (none = all) every pending message is
 * walked once; a message published during the walk may be missed, as QStash's is. `count` is
 * accepted and ignored, as QStash ignores it here: one call cancels every match. The ids may also
 * come as an older SDK sent them, in a JSON body.
 */
export const cancelMessages: ApiHandler = async (request) => {
  const query = parseListQuery(request.query, {
    filters: MESSAGE_FILTERS,
    maxCount: 1_000_000,
    cursor: true,
  });
  const fromBody = bodyMessageIds(await readBody(request.req, MAX_CANCEL_BODY_BYTES));
  if (fromBody !== undefined) {
    if (hasFilters(query.filters))
      throw new InvalidRequestError('give the messages to cancel in the query or in the body, not both');
    query.filters.messageId = fromBody;
  }
  const { messageId: ids, ...filters } = query.filters;
  const messages = pending(request);
  if (ids !== undefined) {
    if (hasFilters(filters)) throw new InvalidRequestError('messageIds cannot be combined with filters');
    const cancelled = await storeCall('cancel the messages', () => messages.cancel(ids));
    sendJson(request.res, 200, { cancelled });
    return;
  }
  let cancelled = 0;
  await storeCall('cancel the messages', () =>
    messages.scan(async (chunk) => {
      const matching = chunk.filter((m) =>
        matchesFilters(
          {
            url: m.destination,
            labels: labelsOf(m.label),
            time: m.createdAt,
            messageId: m.id,
            topicName: m.topicName,
            endpointName: m.endpointName,
            scheduleId: m.scheduleId,
            queueName: m.queueName,
            flowControlKey: m.flowControl?.key,
          },
          filters,
        ),
      );
      if (matching.length > 0) cancelled += await messages.cancel(matching);
    }),
  );
  sendJson(request.res, 200, { cancelled });
};
