import type { ApiHandler, ApiRequest } from './api-request.js';
import { InvalidRequestError, MessageNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import { hasFilters, matchesFilters, MESSAGE_FILTERS, parseListQuery, labelsOf } from '../core/list-query.js';
import { buildMessageAnswer } from '../core/message-answer.js';
import type { QueueMessage } from '../core/message.js';
import type { PendingMessages } from '../stores/pending-messages.js';
import { BindingStores } from '../stores/binding-stores.js';
import { readBulkIdsBody } from './bulk-ids-body.js';
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
  return new BindingStores(request).pending();
}

function messageId(request: ApiRequest): string {
  return request.params.id ?? '';
}

/**
 * A workflow wait's timer (QueueMessage.workflowWait) is the gateway's own, not a message anyone
 * published: not shown, and not cancelled by the messages API, whose bulk cancel would otherwise
 * leave a waiting run without its timeout. Its run's cancel takes it (workflow-routes.ts).
 */
function isPublished(message: QueueMessage): boolean {
  return message.workflowWait === undefined;
}

/**
 * What a cancel by id takes: the message as found, or its id when not found; undefined for a timer.
 * The read is the cancel's first step, so a 503 names the cancel (`action`) that did not happen.
 */
async function cancelTarget(
  request: ApiRequest,
  id: string,
  action: 'cancel the message' | 'cancel the messages',
): Promise<QueueMessage | string | undefined> {
  const found = await storeCall(action, () => pending(request).find(id));
  if (found === undefined) return id;
  return isPublished(found.message) ? found.message : undefined;
}

/** Ids read at once by a cancel by ids. */
const FIND_CHUNK = 500;

export const getMessage: ApiHandler = async (request) => {
  parseListQuery(request.query, NO_QUERY);
  const id = messageId(request);
  const found = await storeCall('read the message', () => pending(request).find(id));
  if (!found || !isPublished(found.message)) throw new MessageNotFoundError(`message ${id} not found`);
  sendJson(request.res, 200, buildMessageAnswer(found));
};

export const cancelMessage: ApiHandler = async (request) => {
  parseListQuery(request.query, NO_QUERY);
  const id = messageId(request);
  const target = await cancelTarget(request, id, 'cancel the message');
  const cancelled =
    target === undefined ? 0 : await storeCall('cancel the message', () => pending(request).cancel([target]));
  if (cancelled === 0) throw new MessageNotFoundError(`message ${id} not found`);
  // QStash documents an empty 202; SDK 2.12's messages.cancel(id) parses a JSON body.
  sendJson(request.res, 200, { cancelled });
};

/**
 * By ids, what is cancelled is counted exactly. By filters (none = all) every pending message is
 * walked once; a message published during the walk may be missed, as QStash's is. `count` is
 * accepted and ignored, as SDK 2.12 documents QStash's server does: the SDK sends `count=100` with
 * every `cancel({all: true})` and `deleteAll()` and promises that one call cancels every match, so
 * honouring it would silently leave all but 100 pending. The ids may also
 * come in a JSON body, as the Python SDK's `cancel_many` sends them. A request with no query and
 * no body at all cancels every pending message: that is the Python SDK's `cancel_all` and
 * QStash's documented bulk cancel; a body that names nothing is refused (bulk-ids-body.ts).
 */
export const cancelMessages: ApiHandler = async (request) => {
  const query = parseListQuery(request.query, {
    filters: MESSAGE_FILTERS,
    maxCount: 1_000_000,
    cursor: true,
  });
  // A cancel walks every match in one call, so a cursor would select nothing: ignored, it would
  // leave the request with no selection and cancel every pending message. (The SDK's loops send an
  // empty one, which names nothing and stays accepted.)
  if (query.cursor !== undefined)
    throw new InvalidRequestError(
      'query parameter cursor does not apply to a cancel: it takes every match in one call',
    );
  const fromBody = await readBulkIdsBody(request.req, 'messageIds');
  if (fromBody !== undefined) {
    if (hasFilters(query.filters))
      throw new InvalidRequestError('give the messages to cancel in the query or in the body, not both');
    query.filters.messageId = fromBody;
  }
  const { messageId: ids, ...filters } = query.filters;
  const messages = pending(request);
  if (ids !== undefined) {
    if (hasFilters(filters)) throw new InvalidRequestError('messageIds cannot be combined with filters');
    const targets: (QueueMessage | string)[] = [];
    for (let i = 0; i < ids.length; i += FIND_CHUNK)
      for (const target of await Promise.all(
        ids.slice(i, i + FIND_CHUNK).map((id) => cancelTarget(request, id, 'cancel the messages')),
      ))
        if (target !== undefined) targets.push(target);
    const cancelled = await storeCall('cancel the messages', () => messages.cancel(targets));
    sendJson(request.res, 200, { cancelled });
    return;
  }
  let cancelled = 0;
  await storeCall('cancel the messages', () =>
    messages.scan(async (chunk) => {
      const matching = chunk.filter(
        (m) =>
          isPublished(m) &&
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
              callerIp: m.callerIp,
            },
            filters,
          ),
      );
      if (matching.length > 0) cancelled += await messages.cancel(matching);
    }),
  );
  sendJson(request.res, 200, { cancelled });
};
