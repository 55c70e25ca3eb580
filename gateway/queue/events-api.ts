import type { ApiHandler } from './api-request.js';
import { InvalidRequestError } from './errors.js';
import { EventLog } from './event-log.js';
import { sendJson } from './json-response.js';
import { parseListQuery } from './list-query.js';
import { storeCall } from './store-call.js';

/**
 * QStash's events (logs) API: GET /v2/events (what the SDK's logs() and events() call) and
 * GET /v2/logs (what the docs name), newest first: {events: [...], cursor?}.
 */

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;
/** A stream id this API gave, or bare epoch ms as the SDK's logs() documentation shows. */
const CURSOR = /^\d+(-\d+)?$/;

export const listEvents: ApiHandler = async (request) => {
  const query = parseListQuery(request.query, {
    filters: ['messageId', 'state', 'url', 'host', 'path', 'label', 'fromDate', 'toDate'],
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
    }),
  );
  sendJson(request.res, 200, { events: page.events, ...(page.cursor && { cursor: page.cursor }) });
};
