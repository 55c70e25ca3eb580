import type { CouchInstanceUsage } from '../../../api/couch-instance.js';
import {
  addRequestCounts,
  parseRequestUsage,
  previousUtcDay,
  utcDay,
  ZERO_REQUEST_COUNTS,
  type RequestCounts,
} from '../../../api/request-usage.js';

/**
 * How long after a UTC day ends its counts are still taken: the gateway writes a day's final counts
 * right after midnight (and retries every SETTEE_GATEWAY_USAGE_INTERVAL), so this only has to
 * cover a slow API server or a few failed writes. Counts of a closed day that arrive later are not
 * added (docs/metering.md).
 */
export const DAY_CLOSE_GRACE_MS = 15 * 60_000;

/** The request figures of status.usage this module owns. */
export type RequestUsageFigures = Pick<
  CouchInstanceUsage,
  'requests' | 'bytesIn' | 'bytesOut' | 'today' | 'closedDays'
>;

export interface RequestUsageFold {
  figures: RequestUsageFigures;
  /** Annotations of closed days before yesterday: no gateway writes them any more, so they can go. */
  prune: string[];
  /** Annotations under the usage prefix that do not parse (a hand edit): counted for nothing. */
  malformed: string[];
}

export interface RequestUsageInput {
  /** The activity Lease's annotations, where each gateway process keeps its counts per UTC day. */
  annotations: Record<string, string> | undefined;
  previous: CouchInstanceUsage | undefined;
  /** Epoch ms. */
  now: number;
}

const closedBase = (previous: CouchInstanceUsage | undefined): RequestCounts => {
  const closed = previous?.closedDays;
  return closed === undefined
    ? { ...ZERO_REQUEST_COUNTS }
    : {
        read: closed.read,
        write: closed.write,
        query: closed.query,
        bytesIn: closed.bytesIn,
        bytesOut: closed.bytesOut,
      };
};

/**
 * Sums the gateway processes' counts into status.usage, pure. Each process writes its own
 * cumulative counts per UTC day, so a sum over the keys counts every request once. Days that ended
 * more than DAY_CLOSE_GRACE_MS ago are folded into `closedDays` in the same status write that
 * moves `closedDays.through` past them, after which their annotations are ignored: a crash between
 * that write and the pruning of the annotations counts nothing twice, and the totals never go back.
 */
export function foldRequestUsage(input: RequestUsageInput): RequestUsageFold {
  const { entries, malformed } = parseRequestUsage(input.annotations);
  const previousThrough = input.previous?.closedDays?.through;
  const closable = previousUtcDay(utcDay(input.now - DAY_CLOSE_GRACE_MS));
  const through = previousThrough !== undefined && previousThrough > closable ? previousThrough : closable;
  const today = utcDay(input.now);
  const beforeYesterday = previousUtcDay(previousUtcDay(today));
  let closed = closedBase(input.previous);
  let open = { ...ZERO_REQUEST_COUNTS };
  let todays = { ...ZERO_REQUEST_COUNTS };
  const prune: string[] = [];
  for (const entry of entries) {
    const alreadyClosed = previousThrough !== undefined && entry.day <= previousThrough;
    if (!alreadyClosed) {
      if (entry.day <= through) closed = addRequestCounts(closed, entry.counts);
      else open = addRequestCounts(open, entry.counts);
      if (entry.day === today) todays = addRequestCounts(todays, entry.counts);
    }
    if (entry.day <= through && entry.day <= beforeYesterday) prune.push(entry.key);
  }
  const total = addRequestCounts(closed, open);
  return {
    figures: {
      requests: { read: total.read, write: total.write, query: total.query },
      bytesIn: total.bytesIn,
      bytesOut: total.bytesOut,
      today: { date: today, requests: todays.read + todays.write + todays.query, ...todays },
      closedDays: { through, ...closed },
    },
    prune,
    malformed,
  };
}
