import type { Redis } from 'ioredis';
import { EVENT_FIELD, type QueueKeys } from '../core/keys.js';
import { matchesFilters, type ListFilters } from '../core/list-query.js';
import type { MessageEvent } from '../core/message-event.js';

export interface EventPage {
  events: MessageEvent[];
  /** Where the next page starts (an events stream id); absent on the last page. */
  cursor?: string;
}

/** QStash's `order` of GET /v2/logs. */
export type EventOrder = 'latestFirst' | 'earliestFirst';

/** Events read per step of a page, and the most one page request examines when filtering. */
const READ_STEP = 500;
const MAX_EXAMINED_PER_PAGE = 20_000;

type RawEntry = [string, string[]];

function eventOf([, fields]: RawEntry): MessageEvent | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== EVENT_FIELD) continue;
    try {
      return JSON.parse(fields[i + 1]!) as MessageEvent;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * A binding's events (keys.ts: one stream; the scripts that change a message's state append to
 * it). Pages are read newest first; entry ids are times, so fromDate/toDate bound the read itself.
 */
export class EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
  ) {}

  /**
   * Up to `count` events matching `filters`, newest first (QStash's `latestFirst`, the default) or
   * oldest first (`earliestFirst`), after `cursor` in that order. A selective filter over a long
   * log may give a short page with a cursor: a page examines at most MAX_EXAMINED_PER_PAGE events.
   */
  async page(input: {
    count: number;
    cursor?: string;
    filters: ListFilters;
    order?: EventOrder;
  }): Promise<EventPage> {
    const { fromDate, toDate, ...filters } = input.filters;
    const newestFirst = (input.order ?? 'latestFirst') === 'latestFirst';
    const events: MessageEvent[] = [];
    // The bounds of the read, in the read's direction: `from` moves on page by page, `to` stays.
    let from = newestFirst
      ? toDate !== undefined
        ? String(toDate)
        : '+'
      : fromDate !== undefined
        ? String(fromDate)
        : '-';
    const to = newestFirst
      ? fromDate !== undefined
        ? String(fromDate)
        : '-'
      : toDate !== undefined
        ? String(toDate)
        : '+';
    // A bare-ms cursor (the SDK's docs loop on one) takes the events of that ms and before.
    if (input.cursor !== undefined) from = input.cursor.includes('-') ? `(${input.cursor}` : input.cursor;
    let examined = 0;
    for (;;) {
      const entries = (
        newestFirst
          ? await this.redis.xrevrange(this.keys.events, from, to, 'COUNT', READ_STEP)
          : await this.redis.xrange(this.keys.events, from, to, 'COUNT', READ_STEP)
      ) as RawEntry[];
      for (const entry of entries) {
        examined += 1;
        const event = eventOf(entry);
        if (event && matchesFilters({ ...event, labels: event.labels ?? [] }, filters)) {
          events.push(event);
          if (events.length === input.count) return { events, cursor: entry[0] };
        }
        if (examined >= MAX_EXAMINED_PER_PAGE) return { events, cursor: entry[0] };
      }
      if (entries.length < READ_STEP) return { events };
      from = `(${entries[entries.length - 1]![0]}`;
    }
  }

  /** Drops events older than `retentionMs` (whole stream nodes at a time: bounded work). */
  async trim(retentionMs: number, now = Date.now()): Promise<number> {
    return this.redis.xtrim(this.keys.events, 'MINID', '~', Math.max(0, now - retentionMs));
  }
}
