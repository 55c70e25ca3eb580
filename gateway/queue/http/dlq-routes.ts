import type { ApiHandler, ApiRequest } from './api-request.js';
import { DLQ_ID_PATTERN, type DeadLetter } from '../core/dead-letter.js';
import type { DeadLetterQueue } from '../stores/dead-letter-queue.js';
import { buildDeadLetterAnswer } from '../core/dlq-answer.js';
import { InvalidRequestError, MessageNotFoundError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import {
  hasFilters,
  MESSAGE_FILTERS,
  parseListQuery,
  type ListQuery,
  type ListQuerySpec,
} from '../core/list-query.js';
import { buildRetriedMessage, retryOverridesOf } from './dlq-retry.js';
import { quotasOf } from '../core/quotas.js';
import { BindingStores } from '../stores/binding-stores.js';
import { storeCall } from './store-call.js';
import { readBulkIdsBody } from './bulk-ids-body.js';
import { listWorkflowDeadLetters } from './workflow-dlq-routes.js';

/**
 * QStash's dead-letter queue API on a binding's dead letters:
 *   GET    /v2/dlq                  a page, newest first: {messages, cursor?}; with source=workflow,
 *                                   the workflow DLQ's (workflow-dlq-routes.ts)
 *   GET    /v2/dlq/{dlqId}          one dead letter, or 404
 *   DELETE /v2/dlq/{dlqId}          deletes it, or 404
 *   DELETE /v2/dlq                  by dlqIds (query or JSON body), or a page of filter matches
 *                                   (no filter: of every letter): {deleted, cursor?}
 *   POST   /v2/dlq/retry/{dlqId}    sends it again as a new message: {messageId}
 *   POST   /v2/dlq/retry            as DELETE /v2/dlq: {responses, cursor?}
 * A bulk request that names nothing (no ids, no filter, no count; a cursor alone names nothing) is
 * refused, never read as "every letter".
 * Publish headers on a retry request (Upstash-Retries, Upstash-Delay, Upstash-Forward-*, ...)
 * override what the dead letter stored.
 */

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;

const LIST_SPEC: ListQuerySpec = {
  filters: ['dlqId', ...MESSAGE_FILTERS, 'responseStatus'],
  maxCount: MAX_PAGE,
  cursor: true,
};

function queue(request: ApiRequest): DeadLetterQueue {
  return new BindingStores(request).deadLetters();
}

function parseQuery(request: ApiRequest): ListQuery {
  const query = parseListQuery(request.query, LIST_SPEC);
  if (query.cursor !== undefined && !DLQ_ID_PATTERN.test(query.cursor))
    throw new InvalidRequestError(
      `query parameter cursor ${JSON.stringify(query.cursor)} is not a cursor this API gave`,
    );
  const { dlqId, ...filters } = query.filters;
  if (dlqId !== undefined && hasFilters(filters))
    throw new InvalidRequestError('dlqIds cannot be combined with filters');
  return query;
}

/**
 * What a bulk delete or retry names: dlqIds from the query or from a JSON body (the Python SDK's
 * `delete_many`), filters, or every letter a page at a time (the SDK's `all: true` sends only
 * `count`). A request with none of these is a 400.
 */
async function parseBulkQuery(request: ApiRequest): Promise<ListQuery> {
  const query = parseQuery(request);
  const fromBody = await readBulkIdsBody(request.req, 'dlqIds');
  if (fromBody !== undefined) {
    if (hasFilters(query.filters))
      throw new InvalidRequestError('give the dead letters in the query or in the body, not both');
    query.filters.dlqId = fromBody;
  }
  // A cursor alone names nothing either: it would take a default page of every letter (the SDK's
  // `all` always sends count with its cursor).
  if (!hasFilters(query.filters) && query.count === undefined)
    throw new InvalidRequestError(
      'the request names no dead letters: give dlqIds, filters, or count to take every letter a page at a time',
    );
  return query;
}

/**
 * The letters a request names: its dlqIds (the first `count` of them found), or the page of
 * `count` filter matches after its cursor.
 */
async function selected(
  request: ApiRequest,
  query: ListQuery,
): Promise<{ letters: DeadLetter[]; cursor?: string }> {
  const dlq = queue(request);
  const ids = query.filters.dlqId;
  if (ids !== undefined) {
    const found = await storeCall('read the dead letters', () => dlq.get(ids));
    return { letters: found.filter((l): l is DeadLetter => l !== undefined).slice(0, query.count) };
  }
  const { dlqId: _ignored, ...filters } = query.filters;
  return storeCall('read the dead letters', () =>
    dlq.page({
      count: query.count ?? DEFAULT_PAGE,
      filters,
      ...(query.cursor !== undefined && { cursor: query.cursor }),
    }),
  );
}

async function findLetter(request: ApiRequest): Promise<DeadLetter> {
  parseListQuery(request.query, { filters: [] });
  const id = request.params.id ?? '';
  const [letter] = await storeCall('read the dead letter', () => queue(request).get([id]));
  if (!letter) throw new MessageNotFoundError(`dead letter ${id} not found`);
  return letter;
}

export const listDeadLetters: ApiHandler = async (request) => {
  // The Workflow SDK's client.dlq.list asks this route with source=workflow.
  if (request.query.has('source')) return listWorkflowDeadLetters(request);
  const { letters, cursor } = await selected(request, parseQuery(request));
  sendJson(request.res, 200, { messages: letters.map(buildDeadLetterAnswer), ...(cursor && { cursor }) });
};

export const getDeadLetter: ApiHandler = async (request) => {
  sendJson(request.res, 200, buildDeadLetterAnswer(await findLetter(request)));
};

export const deleteDeadLetter: ApiHandler = async (request) => {
  const letter = await findLetter(request);
  const deleted = await storeCall('delete the dead letter', () => queue(request).delete([letter.dlqId]));
  if (deleted === 0) throw new MessageNotFoundError(`dead letter ${letter.dlqId} not found`);
  sendJson(request.res, 200, { deleted });
};

export const deleteDeadLetters: ApiHandler = async (request) => {
  const { letters, cursor } = await selected(request, await parseBulkQuery(request));
  const deleted = await storeCall('delete the dead letters', () =>
    queue(request).delete(letters.map((l) => l.dlqId)),
  );
  sendJson(request.res, 200, { deleted, ...(cursor && { cursor }) });
};

async function retry(request: ApiRequest, letters: readonly DeadLetter[]): Promise<{ messageId: string }[]> {
  const overrides = retryOverridesOf(request);
  const now = Date.now();
  const items = letters.map((letter) => ({
    dlqId: letter.dlqId,
    message: buildRetriedMessage(letter, overrides, now),
  }));
  const quota = quotasOf(request.target);
  const retried = await storeCall('retry the dead letters', () => queue(request).retry(items, quota, now));
  return items.filter((_, i) => retried[i]).map((item) => ({ messageId: item.message.id }));
}

export const retryDeadLetter: ApiHandler = async (request) => {
  const letter = await findLetter(request);
  const [response] = await retry(request, [letter]);
  if (!response) throw new MessageNotFoundError(`dead letter ${letter.dlqId} not found`);
  sendJson(request.res, 200, response);
};

export const retryDeadLetters: ApiHandler = async (request) => {
  const { letters, cursor } = await selected(request, await parseBulkQuery(request));
  const responses = await retry(request, letters);
  sendJson(request.res, 200, { responses, ...(cursor && { cursor }) });
};
