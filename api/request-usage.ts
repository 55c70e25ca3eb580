/**
 * The gateway's request counts in the Kubernetes API (the contract's "Request usage", contract.ts):
 * each gateway process writes, per instance and per UTC day, what it passed on that day, as one
 * annotation of the instance's activity Lease under a field manager of its own. Written here once
 * for both sides: the gateway formats them, the operator parses and sums them into status.usage.
 */

/** One process's counts for one instance and one UTC day, cumulative over that day. */
export interface RequestCounts {
  read: number;
  write: number;
  query: number;
  /** Request body bytes (Content-Length, or counted as a chunked upload streams). */
  bytesIn: number;
  /** Response body bytes as streamed to the client. */
  bytesOut: number;
}

export const ZERO_REQUEST_COUNTS: Readonly<RequestCounts> = Object.freeze({
  read: 0,
  write: 0,
  query: 0,
  bytesIn: 0,
  bytesOut: 0,
});

export const REQUEST_COUNT_FIELDS = ['read', 'write', 'query', 'bytesIn', 'bytesOut'] as const;

/** `usage.settee.dev/<YYYY-MM-DD>.<writer>`: the prefix of every request-usage annotation. */
export const REQUEST_USAGE_ANNOTATION_PREFIX = 'usage.settee.dev/';

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** An annotation name's part after the prefix: at most 63 characters (Kubernetes' qualified name). */
const NAME_LIMIT = 63;
const DAY_LENGTH = 10;

/** The UTC day of an epoch-ms moment, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, DAY_LENGTH);
}

/** The UTC day before `day`. */
export function previousUtcDay(day: string): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) - 86_400_000);
}

/** Epoch ms of the end of a UTC day (the next day's midnight). */
export function endOfUtcDay(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) + 86_400_000;
}

/**
 * A gateway process's writer id: its replica name (pod name) and a per-process suffix, so a
 * restarted process under the same name never overwrites what the one before it counted. Cut to fit
 * an annotation name, with a digest of the whole keeping distinct names distinct.
 */
export function requestUsageWriterId(replicaName: string, processId: string): string {
  const clean = `${replicaName}.${processId}`.replace(/[^A-Za-z0-9._-]/g, '-');
  const room = NAME_LIMIT - DAY_LENGTH - 1;
  if (clean.length <= room) return clean.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'gateway';
  const digest = fnv1a(clean);
  return `${clean.slice(0, room - digest.length - 1).replace(/[^A-Za-z0-9]+$/, '')}-${digest}`;
}

/** 32-bit FNV-1a as 8 hex digits: short, stable, and free of node: imports (api/ is shared with the browser). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

export function requestUsageAnnotation(day: string, writerId: string): string {
  return `${REQUEST_USAGE_ANNOTATION_PREFIX}${day}.${writerId}`;
}

/** Compact and fixed in field order: `{"read":1,"write":2,"query":0,"bytesIn":10,"bytesOut":20}`. */
export function formatRequestCounts(counts: RequestCounts): string {
  return JSON.stringify({
    read: counts.read,
    write: counts.write,
    query: counts.query,
    bytesIn: counts.bytesIn,
    bytesOut: counts.bytesOut,
  });
}

/** One parsed annotation; `key` is its full name (to prune it). */
export interface RequestUsageEntry {
  key: string;
  day: string;
  writerId: string;
  counts: RequestCounts;
}

function parseCounts(value: string): RequestCounts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const fields = parsed as Record<string, unknown>;
  const counts = { ...ZERO_REQUEST_COUNTS };
  for (const field of REQUEST_COUNT_FIELDS) {
    const figure = fields[field];
    if (typeof figure !== 'number' || !Number.isSafeInteger(figure) || figure < 0) return undefined;
    counts[field] = figure;
  }
  return counts;
}

/**
 * The request-usage annotations of a Lease. Malformed ones (a hand edit) are returned apart so the
 * caller can say so; they count for nothing.
 */
export function parseRequestUsage(annotations: Record<string, string> | undefined): {
  entries: RequestUsageEntry[];
  malformed: string[];
} {
  const entries: RequestUsageEntry[] = [];
  const malformed: string[] = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!key.startsWith(REQUEST_USAGE_ANNOTATION_PREFIX)) continue;
    const name = key.slice(REQUEST_USAGE_ANNOTATION_PREFIX.length);
    const day = name.slice(0, DAY_LENGTH);
    const counts = parseCounts(value);
    if (!DAY_PATTERN.test(day) || name[DAY_LENGTH] !== '.' || counts === undefined) {
      malformed.push(key);
      continue;
    }
    entries.push({ key, day, writerId: name.slice(DAY_LENGTH + 1), counts });
  }
  return { entries, malformed };
}

export function addRequestCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  return {
    read: a.read + b.read,
    write: a.write + b.write,
    query: a.query + b.query,
    bytesIn: a.bytesIn + b.bytesIn,
    bytesOut: a.bytesOut + b.bytesOut,
  };
}

export function subtractRequestCounts(a: RequestCounts, b: RequestCounts): RequestCounts {
  return {
    read: a.read - b.read,
    write: a.write - b.write,
    query: a.query - b.query,
    bytesIn: a.bytesIn - b.bytesIn,
    bytesOut: a.bytesOut - b.bytesOut,
  };
}
