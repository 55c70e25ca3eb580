/**
 * Waits for tests whose assertions can only hold while no wall-clock boundary passes: a count of
 * the ticks of a `* * * * *` schedule run by a real ticker (a real minute coming adds a tick,
 * rightly), or the "today" figures of request usage summed by the real operator (UTC midnight
 * moves them to a new day, rightly). Used only where neither a fixed "now" can be passed nor a
 * clock injected, because the clock that matters is a running component's.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * Resolves once the next whole multiple of `periodMs` since the epoch is at least `needMs` away:
 * at once when it already is, else just after that boundary has passed.
 */
async function clearOfBoundary(periodMs: number, needMs: number): Promise<void> {
  if (needMs >= periodMs)
    throw new RangeError(`needMs ${needMs} must be shorter than the period ${periodMs}`);
  const untilBoundary = periodMs - (Date.now() % periodMs);
  if (untilBoundary >= needMs) return;
  // Timers may fire a millisecond early; the margin puts the test after the boundary for sure.
  await new Promise((resolve) => setTimeout(resolve, untilBoundary + 50));
}

/** Waits until the next whole minute is at least `needMs` away. */
export const clearOfMinute = (needMs: number): Promise<void> => clearOfBoundary(MINUTE_MS, needMs);

/** Waits until the next UTC midnight (epoch days have no leap seconds) is at least `needMs` away. */
export const clearOfUtcMidnight = (needMs: number): Promise<void> => clearOfBoundary(DAY_MS, needMs);
