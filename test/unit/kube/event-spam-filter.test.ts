import { EventSpamFilter } from '../../../kube/event-spam-filter.js';

const MINUTE = 60_000;

describe('EventSpamFilter', () => {
  const policy = { burst: 3, refillIntervalMs: 5 * MINUTE, maxKeys: 2 };

  it('when one key records more than its burst at once, then the rest are refused', () => {
    const filter = new EventSpamFilter(policy);
    const outcomes = Array.from({ length: 5 }, () => filter.allow('a', 0));
    expect(outcomes).toEqual([true, true, true, false, false]);
  });

  it('when a refill interval passes, then exactly one more is allowed, and the bucket never holds more than the burst', () => {
    const filter = new EventSpamFilter(policy);
    for (let i = 0; i < 3; i += 1) filter.allow('a', 0);
    expect(filter.allow('a', 5 * MINUTE - 1)).toBe(false);
    expect(filter.allow('a', 5 * MINUTE)).toBe(true);
    expect(filter.allow('a', 5 * MINUTE)).toBe(false);
    // A day later the bucket is full again: a burst, not a day's worth.
    const later = 24 * 60 * MINUTE;
    expect(Array.from({ length: 4 }, () => filter.allow('a', later))).toEqual([true, true, true, false]);
  });

  it('when another key records, then its own bucket applies', () => {
    const filter = new EventSpamFilter(policy);
    for (let i = 0; i < 3; i += 1) filter.allow('a', 0);
    expect(filter.allow('a', 0)).toBe(false);
    expect(filter.allow('b', 0)).toBe(true);
  });

  it('when more keys than maxKeys were seen, then the least recently used is forgotten and starts full', () => {
    const filter = new EventSpamFilter(policy);
    for (let i = 0; i < 3; i += 1) filter.allow('a', 0);
    filter.allow('b', 0);
    filter.allow('c', 0);
    expect(filter.allow('a', 0)).toBe(true);
  });
});
