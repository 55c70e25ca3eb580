import ipaddr from 'ipaddr.js';
import { ENV_DURATION, readDuration } from '../api/duration.js';

/**
 * Reads typed values from an environment and collects every problem instead of stopping at the
 * first, so a bad deployment is fixed in one round. Used by operator/config.ts and
 * gateway/config.ts; a section of the config (couch-instance, queue-binding, the gateway's queue)
 * reads its own variables through the same reader.
 */
export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** `500ms`, `10s`, `15m`, `1h`, `1.5s`, or combinations like `1m30s`; undefined when not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const ms = readDuration(text, ENV_DURATION);
  return ms !== undefined && Number.isFinite(ms) ? ms : undefined;
}

export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** Trimmed value, or undefined when unset or empty. */
  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  integer(name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range;
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name}=${text}: expected an integer from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  /** A finite number above zero, fractions allowed (a scale factor, say). */
  positiveNumber(name: string, fallback: number): number {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) {
      this.problems.push(`${name}=${text}: expected a positive number`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const text = this.raw(name)?.toLowerCase();
    if (text === undefined) return fallback;
    if (['true', '1', 'yes', 'on'].includes(text)) return true;
    if (['false', '0', 'no', 'off'].includes(text)) return false;
    this.problems.push(`${name}=${text}: expected true or false`);
    return fallback;
  }

  /** A duration such as `15s` or `10m` (see parseDurationMs), in milliseconds. */
  durationMs(name: string, fallbackMs: number, range: { minMs?: number } = {}): number {
    const text = this.raw(name);
    if (text === undefined) return fallbackMs;
    const value = parseDurationMs(text);
    if (value === undefined || value < (range.minMs ?? 0)) {
      this.problems.push(
        `${name}=${text}: expected a duration such as 500ms, 10s, 15m or 1h${range.minMs ? ` of at least ${range.minMs} ms` : ''}`,
      );
      return fallbackMs;
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    if ((allowed as readonly string[]).includes(text)) return text as T;
    this.problems.push(`${name}=${text}: expected one of ${allowed.join(', ')}`);
    return fallback;
  }

  /** A comma-separated list of CIDR ranges (none when unset); each malformed one is a problem of its own. */
  cidrList(name: string): string[] {
    const ranges = (this.raw(name) ?? '')
      .split(',')
      .map((range) => range.trim())
      .filter((range) => range !== '');
    // Four-part IPv4 only: ipaddr.js would read `10/8` as 0.0.0.10/8, which nobody means.
    const malformed = ranges.filter(
      (range) => !ipaddr.IPv4.isValidCIDRFourPartDecimal(range) && !ipaddr.IPv6.isValidCIDR(range),
    );
    for (const range of malformed) {
      this.problems.push(
        `${name}: ${JSON.stringify(range)} is not a CIDR range such as 10.0.0.0/8 or fd00::/8`,
      );
    }
    return malformed.length === 0 ? ranges : [];
  }

  /** Records a problem found by a cross-field check. */
  problem(message: string): void {
    this.problems.push(message);
  }

  /** Throws ConfigError listing every problem seen so far. */
  assertValid(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

/** Freezes an object and every object inside it, so config can be shared without defensive copies. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
