import type { ApiHandler } from './api-request.js';
import { InvalidRequestError } from '../core/errors.js';
import { EventLog, type EventOrder } from '../stores/event-log.js';
import { sendJson } from './json-response.js';
import { MESSAGE_FILTERS, parseListQuery } from '../core/list-query.js';
import { storeCall } from './store-call.js';

/**
 * QStash's events (logs) API: GET /v2/events (what the SDK's logs() and events() call) and
 * GET /v2/logs (what the docs name), newest first: {events: [...], cursor?}.
 */

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;
/** A stream id this API gave, or bare epoch ms as the SDK's logs() documentation shows. */
const CURSOR = /^\d+(-\d+)?$/;

const ORDERS: readonly EventOrder[] = ['latestFirst', 'earliestFirst'];

export const listEvents: ApiHandler = async (request) => {
  const params = new URLSearchParams(request.query);
  const order = params.get('order') ?? undefined;
  params.delete('order');
  if (order !== undefined && !(ORDERS as readonly string[]).includes(order))
    throw new InvalidRequestError(`query parameter order must be ${ORDERS.join(' or ')}`);
  const query = parseListQuery(params, {
    filters: [...MESSAGE_FILTERS, 'state'],
    maxCount: MAX_PAGE,
    cursor: true,
  });
  if (query.cursor !== undefined && !CURSOR.test(query.cursor))
    throw new InvalidRequestError(
      `query parameter cursor ${JSON.stringify(query.cursor)} is not a cursor this API gave`,
    );
  const log = new EventLog(request.redis, request.keys);
  const page = await storeCall('read the events', () =>
    log.page({
      count: query.count ?? DEFAULT_PAGE,
      filters: query.filters,
      ...(query.cursor !== undefined && { cursor: query.cursor }),
      ...(order !== undefined && { order: order as EventOrder }),
    }),
  );
  sendJson(request.res, 200, { events: page.events, ...(page.cursor && { cursor: page.cursor }) });
};
