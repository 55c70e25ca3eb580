/**
 * Durations as QStash writes them in Upstash-Delay, Upstash-Timeout and a binding's limits: a bare
 * number of seconds ("30"), or a sequence of <number><unit> with units ms, s, m, h, d ("10s",
 * "5m", "2d", "1h30m"). Kubernetes durations ("168h") are a subset, so one parser serves both.
 */

export const QSTASH_DURATION_PATTERN = '^([0-9]+|([0-9]+(ms|s|m|h|d))+)$';
const DURATION_REGEX = new RegExp(QSTASH_DURATION_PATTERN);
const PART_REGEX = /([0-9]+)(ms|s|m|h|d)/g;
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

export class InvalidQStashDurationError extends Error {
  readonly code = 'InvalidQStashDuration';
  constructor(readonly value: string) {
    super(`${JSON.stringify(value)} is not a duration (such as 30, 10s, 5m, 1h or 2d)`);
    this.name = 'InvalidQStashDurationError';
  }
}

/** Milliseconds in `value` (surrounding spaces ignored). Throws InvalidQStashDurationError. */
export function parseQStashDuration(value: string): number {
  const text = value.trim();
  if (!DURATION_REGEX.test(text)) throw new InvalidQStashDurationError(value);
  if (/^[0-9]+$/.test(text)) return checked(value, Number(text) * 1_000);
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART_REGEX))
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  return checked(value, total);
}

function checked(value: string, ms: number): number {
  if (!Number.isSafeInteger(ms)) throw new InvalidQStashDurationError(value);
  return ms;
}

/** The shortest exact spelling of `ms` in days, hours, minutes, seconds and milliseconds: 604800000 -> "7d". */
export function formatQStashDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms']) {
    const size = UNIT_MS[unit]!;
    const amount = Math.floor(rest / size);
    if (amount > 0) text += `${amount}${unit}`;
    rest -= amount * size;
  }
  return text;
}
