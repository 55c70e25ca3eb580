import { jest } from '@jest/globals';
import { clearOfMinute, clearOfUtcMidnight } from '../../helpers/clock-boundary.js';

/** Whether `waiting` has settled once the fake clock has moved on by `ms`. */
async function settledAfter(waiting: Promise<void>, ms: number): Promise<boolean> {
  let settled = false;
  void waiting.then(() => (settled = true));
  await jest.advanceTimersByTimeAsync(ms);
  return settled;
}

/**
 * The waits of the tests that count what a real clock does: they must put the test clear of the
 * boundary, and cost nothing when it is already far off. On jest's fake clock, so exact.
 */
describe('clearOfMinute and clearOfUtcMidnight', () => {
  afterEach(() => jest.useRealTimers());

  it('when the next minute is far enough away, then the wait is over at once', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-24T10:00:40.000Z') });
    expect(await settledAfter(clearOfMinute(15_000), 0)).toBe(true);
  });

  it('when the next minute is nearer than asked, then the wait ends only after it, with the whole minute ahead', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-24T10:00:50.000Z') });
    const waiting = clearOfMinute(15_000);
    expect(await settledAfter(waiting, 9_999)).toBe(false);
    expect(await settledAfter(waiting, 100)).toBe(true);
    expect(new Date(Date.now()).toISOString()).toBe('2026-11-24T10:01:00.099Z');
  });

  it('when UTC midnight is nearer than asked, then the wait ends just after it; an hour before it, at once', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-11-24T23:59:40.000Z') });
    const waiting = clearOfUtcMidnight(60_000);
    expect(await settledAfter(waiting, 19_999)).toBe(false);
    expect(await settledAfter(waiting, 100)).toBe(true);
    expect(new Date(Date.now()).toISOString().slice(0, 10)).toBe('2026-11-25');
    jest.setSystemTime(Date.parse('2026-11-24T23:00:00.000Z'));
    expect(await settledAfter(clearOfUtcMidnight(60_000), 0)).toBe(true);
  });

  it('when more is asked than the period has, then it is refused rather than waited for forever', async () => {
    await expect(clearOfMinute(60_000)).rejects.toThrow(RangeError);
  });
});
