export interface BackoffPolicy {
  /** Delay after the first failure. */
  baseMs: number;
  /** No delay grows past this. */
  maxMs: number;
}

/**
 * Delay before retry number `failures` (1 = after the first failure): baseMs * 2^(failures-1),
 * capped at maxMs. Pure, so the growth and the cap are tested without clocks.
 */
export function exponentialBackoffMs(policy: BackoffPolicy, failures: number): number {
  if (failures <= 0) return 0;
  // Past 2^52 the exponent only overflows; the cap has long been reached by then.
  const exponent = Math.min(failures - 1, 52);
  return Math.min(policy.baseMs * 2 ** exponent, policy.maxMs);
}

/**
 * `delayMs` less a random share of it, up to `fraction`: clients that failed together (every
 * informer of every replica when the API server went down) retry spread out instead of at once,
 * and never later than the delay itself, so a cap stays a bound.
 */
export function jitteredMs(delayMs: number, fraction: number, random: () => number = Math.random): number {
  return delayMs * (1 - fraction * random());
}
