/**
 * The project's one duration parser. Its base is the duration as Kubernetes and CEL's
 * `duration()` write it: a sequence of <number><unit> with units ms, s, m, h ("10s", "15m",
 * "1h30m"). Each caller names what it takes beyond that (DurationSyntax), so every caller keeps
 * exactly the inputs it accepted:
 * - CRD fields (KUBERNETES_DURATION, the base): parseDuration, DURATION_PATTERN;
 * - QStash headers and a binding's limits (QSTASH_DURATION: days, bare seconds, spaces around):
 *   qstash-duration.ts;
 * - environment variables (ENV_DURATION: decimals such as "1.5s", spaces around):
 *   observability/env-reader.ts.
 */

/** What a caller accepts beyond the base <number><unit>... with ms, s, m, h. */
export interface DurationSyntax {
  /** The unit `d` (days). */
  days?: boolean;
  /** A bare number of seconds ("30"). */
  bareSeconds?: boolean;
  /** Decimal amounts ("1.5s"), the total rounded to the millisecond. */
  decimals?: boolean;
  /** Spaces around the value are ignored. */
  trimmed?: boolean;
}

export const KUBERNETES_DURATION: DurationSyntax = Object.freeze({});
export const QSTASH_DURATION: DurationSyntax = Object.freeze({
  days: true,
  bareSeconds: true,
  trimmed: true,
});
export const ENV_DURATION: DurationSyntax = Object.freeze({ decimals: true, trimmed: true });

/** Milliseconds per unit. */
export const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const PART_REGEX = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)/g;

/** The regular expression (as a string, for a CRD's `pattern` too) of the values `syntax` accepts. */
export function durationPattern(syntax: DurationSyntax): string {
  const amount = syntax.decimals ? '[0-9]+(\\.[0-9]+)?' : '[0-9]+';
  const parts = `(${amount}(ms|s|m|h${syntax.days ? '|d' : ''}))+`;
  return syntax.bareSeconds ? `^([0-9]+|${parts})$` : `^${parts}$`;
}

const patterns = new Map<DurationSyntax, RegExp>();
function regexOf(syntax: DurationSyntax): RegExp {
  let regex = patterns.get(syntax);
  if (!regex) {
    regex = new RegExp(durationPattern(syntax));
    patterns.set(syntax, regex);
  }
  return regex;
}

/**
 * Milliseconds in `value` as `syntax` reads it, or undefined when it is not such a duration. The
 * total may pass Number.MAX_SAFE_INTEGER (or be Infinity): callers bound it as their API needs.
 */
export function readDuration(value: string, syntax: DurationSyntax): number | undefined {
  const text = syntax.trimmed ? value.trim() : value;
  if (!regexOf(syntax).test(text)) return undefined;
  if (syntax.bareSeconds && /^[0-9]+$/.test(text)) return Number(text) * 1_000;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART_REGEX))
    total += Number(amount) * DURATION_UNIT_MS[unit!]!;
  return syntax.decimals ? Math.round(total) : total;
}

export const DURATION_PATTERN = durationPattern(KUBERNETES_DURATION);

export class InvalidDurationError extends Error {
  readonly code = 'InvalidDuration';
  constructor(readonly value: string) {
    super(`${JSON.stringify(value)} is not a duration (such as 10s, 15m or 1h30m)`);
    this.name = 'InvalidDurationError';
  }
}

export function isDuration(value: string): boolean {
  return readDuration(value, KUBERNETES_DURATION) !== undefined;
}

/** Milliseconds in a Kubernetes duration. Throws InvalidDurationError. */
export function parseDuration(value: string): number {
  const ms = readDuration(value, KUBERNETES_DURATION);
  if (ms === undefined) throw new InvalidDurationError(value);
  return ms;
}
