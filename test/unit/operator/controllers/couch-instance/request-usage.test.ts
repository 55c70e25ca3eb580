import type { CouchInstanceUsage } from '../../../../../api/couch-instance.js';
import { formatRequestCounts, requestUsageAnnotation } from '../../../../../api/request-usage.js';
import {
  DAY_CLOSE_GRACE_MS,
  foldRequestUsage,
} from '../../../../../operator/controllers/couch-instance/request-usage.js';

const counts = (read: number, write = 0, query = 0, bytesIn = 0, bytesOut = 0) => ({
  read,
  write,
  query,
  bytesIn,
  bytesOut,
});
const entry = (day: string, writer: string, c: ReturnType<typeof counts>): [string, string] => [
  requestUsageAnnotation(day, writer),
  formatRequestCounts(c),
];

describe('foldRequestUsage', () => {
  const noon = Date.parse('2026-11-24T12:00:00Z');

  it('when two gateway processes report the same day, then status sums them once, in total and for today', () => {
    const annotations = Object.fromEntries([
      entry('2026-11-24', 'gw-a.111111', counts(5, 3, 2, 48, 900)),
      entry('2026-11-24', 'gw-b.222222', counts(1, 1, 0, 10, 100)),
      ['settee.dev/open-streams', '0'],
    ]);
    const fold = foldRequestUsage({ annotations, previous: undefined, now: noon });
    expect(fold.figures.requests).toEqual({ read: 6, write: 4, query: 2 });
    expect([fold.figures.bytesIn, fold.figures.bytesOut]).toEqual([58, 1000]);
    expect(fold.figures.today).toEqual({ date: '2026-11-24', requests: 12, ...counts(6, 4, 2, 58, 1000) });
    expect(fold.prune).toEqual([]);
  });

  it('when folded again from its own status with the same annotations, then the figures do not move (idempotent)', () => {
    const annotations = Object.fromEntries([
      entry('2026-11-22', 'gw-a.111111', counts(7)),
      entry('2026-11-23', 'gw-a.111111', counts(4)),
      entry('2026-11-24', 'gw-a.111111', counts(2)),
    ]);
    const first = foldRequestUsage({ annotations, previous: undefined, now: noon });
    const again = foldRequestUsage({
      annotations,
      previous: first.figures as CouchInstanceUsage,
      now: noon + 60_000,
    });
    expect(first.figures.requests?.read).toBe(13);
    expect(again.figures).toEqual(first.figures);
  });

  it('when a day has ended, then it closes only after the grace, and annotations of it arriving after that are ignored', () => {
    const yesterday = entry('2026-11-23', 'gw-a.111111', counts(10));
    const justAfterMidnight = Date.parse('2026-11-24T00:05:00Z');
    const early = foldRequestUsage({
      annotations: Object.fromEntries([yesterday]),
      previous: undefined,
      now: justAfterMidnight,
    });
    expect(early.figures.closedDays?.through).toBe('2026-11-22');
    const closed = foldRequestUsage({
      annotations: Object.fromEntries([yesterday]),
      previous: early.figures as CouchInstanceUsage,
      now: Date.parse('2026-11-24T00:00:00Z') + DAY_CLOSE_GRACE_MS,
    });
    expect(closed.figures.closedDays).toEqual({ through: '2026-11-23', ...counts(10) });
    // A late process's count for the closed day is not added; the totals never go back.
    const late = foldRequestUsage({
      annotations: Object.fromEntries([yesterday, entry('2026-11-23', 'gw-late.333333', counts(99))]),
      previous: closed.figures as CouchInstanceUsage,
      now: noon,
    });
    expect(late.figures.requests?.read).toBe(10);
  });

  it('when status already holds the closed days and their annotations are gone, then the totals keep them', () => {
    const previous: CouchInstanceUsage = {
      requests: { read: 50, write: 5, query: 1 },
      bytesIn: 500,
      bytesOut: 5000,
      closedDays: { through: '2026-11-23', ...counts(50, 5, 1, 500, 5000) },
    };
    const fold = foldRequestUsage({
      annotations: Object.fromEntries([entry('2026-11-24', 'gw-a.111111', counts(1, 1, 1, 1, 1))]),
      previous,
      now: noon,
    });
    expect(fold.figures.requests).toEqual({ read: 51, write: 6, query: 2 });
    expect([fold.figures.bytesIn, fold.figures.bytesOut]).toEqual([501, 5001]);
  });

  it('when closed days are older than yesterday, then their annotations are pruned, and yesterday’s (still being written) are not', () => {
    const old = entry('2026-11-20', 'gw-dead.444444', counts(3));
    const yesterday = entry('2026-11-23', 'gw-a.111111', counts(4));
    const fold = foldRequestUsage({
      annotations: Object.fromEntries([old, yesterday]),
      previous: undefined,
      now: noon,
    });
    expect(fold.prune).toEqual([old[0]]);
    expect(fold.figures.requests?.read).toBe(7);
  });

  it('when an annotation is malformed, then it is reported and not counted', () => {
    const fold = foldRequestUsage({
      annotations: { 'usage.settee.dev/2026-11-24.gw': '{"read":"many"}' },
      previous: undefined,
      now: noon,
    });
    expect(fold.malformed).toEqual(['usage.settee.dev/2026-11-24.gw']);
    expect(fold.figures.requests).toEqual({ read: 0, write: 0, query: 0 });
  });
});
