/**
 * Durations as QStash writes them in Upstash-Delay, Upstash-Timeout and a binding's limits: a bare
 * number of seconds ("30"), or a sequence of <number><unit> with units ms, s, m, h, d ("10s",
 * "5m", "2d", "1h30m"). Kubernetes durations ("168h") are a subset; duration.ts parses both.
 */
import { DURATION_UNIT_MS, durationPattern, QSTASH_DURATION, readDuration } from './duration.js';

export const QSTASH_DURATION_PATTERN = durationPattern(QSTASH_DURATION);
export class InvalidQStashDurationError extends Error {
  readonly code = 'InvalidQStashDuration';
  constructor(readonly value: string) {
    super(`${JSON.stringify(value)} is not a duration (such as 30, 10s, 5m, 1h or 2d)`);
    this.name = 'InvalidQStashDurationError';
  }
}

/** Milliseconds in `value` (surrounding spaces ignored; duration.ts). Throws InvalidQStashDurationError. */
export function parseQStashDuration(value: string): number {
  const ms = readDuration(value, QSTASH_DURATION);
  if (ms === undefined || !Number.isSafeInteger(ms)) throw new InvalidQStashDurationError(value);
  return ms;
}

/** The shortest exact spelling of `ms` in days, hours, minutes, seconds and milliseconds: 604800000 -> "7d". */
export function formatQStashDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms']) {
    const size = DURATION_UNIT_MS[unit]!;
    const amount = Math.floor(rest / size);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * size;
  }
  return text;
}
