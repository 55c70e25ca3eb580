import {
  formatRequestCounts,
  parseRequestUsage,
  previousUtcDay,
  requestUsageAnnotation,
  requestUsageWriterId,
  utcDay,
} from '../../../api/request-usage.js';

const QUALIFIED_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

describe('request-usage annotations', () => {
  it('when a writer id is built from a long replica name, then the annotation name fits 63 characters and distinct names stay distinct', () => {
    const long = 'settee-gateway-7d9f8c6b5-x2x9z-with-a-very-long-release-name-indeed';
    const a = requestUsageWriterId(long, 'a1b2c3');
    const b = requestUsageWriterId(long, 'a1b2c4');
    expect(a).not.toBe(b);
    for (const id of [a, b, requestUsageWriterId('gw-0', 'abc123'), requestUsageWriterId('host_x!', '00')]) {
      const name = requestUsageAnnotation('2026-11-24', id).split('/')[1]!;
      expect(name.length).toBeLessThanOrEqual(63);
      expect(name).toMatch(QUALIFIED_NAME);
    }
  });

  it('when counts are formatted and parsed back, then they round-trip with their day and writer', () => {
    const counts = { read: 5, write: 3, query: 2, bytesIn: 48, bytesOut: 1200 };
    const key = requestUsageAnnotation('2026-11-24', 'gw-0.abc123');
    const { entries, malformed } = parseRequestUsage({
      [key]: formatRequestCounts(counts),
      'settee.dev/open-streams': '0',
    });
    expect(malformed).toEqual([]);
    expect(entries).toEqual([{ key, day: '2026-11-24', writerId: 'gw-0.abc123', counts }]);
  });

  it('when an annotation under the prefix is malformed (bad day, bad JSON, negative or fractional figure), then it is reported and counts for nothing', () => {
    const prefix = 'usage.settee.dev/';
    const good = '{"read":1,"write":0,"query":0,"bytesIn":0,"bytesOut":0}';
    const { entries, malformed } = parseRequestUsage({
      [`${prefix}2026-13.gw`]: good,
      [`${prefix}2026-11-24.gw-a`]: 'not json',
      [`${prefix}2026-11-24.gw-b`]: '{"read":-1,"write":0,"query":0,"bytesIn":0,"bytesOut":0}',
      [`${prefix}2026-11-24.gw-c`]: '{"read":1.5,"write":0,"query":0,"bytesIn":0,"bytesOut":0}',
      [`${prefix}2026-11-24.gw-d`]: '{"read":1}',
    });
    expect(entries).toEqual([]);
    expect(malformed).toHaveLength(5);
  });

  it('when days are computed, then they are UTC days and the day before a month start is the last of the month', () => {
    expect(utcDay(Date.parse('2026-11-24T23:59:59.999Z'))).toBe('2026-11-24');
    expect(utcDay(Date.parse('2026-11-25T00:00:00.000Z'))).toBe('2026-11-25');
    expect(previousUtcDay('2026-03-01')).toBe('2026-02-28');
  });
});
