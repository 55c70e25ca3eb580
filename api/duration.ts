/**
 * Durations as Kubernetes and CEL's `duration()` write them: a sequence of <number><unit> with
 * units ms, s, m, h ("10s", "15m", "1h30m").
 */

export const DURATION_PATTERN = '^([0-9]+(ms|s|m|h))+$';
const DURATION_REGEX = new RegExp(DURATION_PATTERN);
const PART_REGEX = /([0-9]+)(ms|s|m|h)/g;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export class InvalidDurationError extends Error {
  readonly code = 'InvalidDuration';
  constructor(readonly value: string) {
    super(`${JSON.stringify(value)} is not a duration (such as 10s, 15m or 1h30m)`);
    this.name = 'InvalidDurationError';
  }
}

export function isDuration(value: string): boolean {
  return DURATION_REGEX.test(value);
}

/** Milliseconds in `value`. Throws InvalidDurationError. */
export function parseDuration(value: string): number {
  if (!DURATION_REGEX.test(value)) throw new InvalidDurationError(value);
  let total = 0;
  for (const [, amount, unit] of value.matchAll(PART_REGEX))
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  return total;
}
