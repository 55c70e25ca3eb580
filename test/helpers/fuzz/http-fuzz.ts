import type http from 'node:http';
import fc from 'fast-check';
import { request as plainRequest } from '../gateway/http-request.js';

/** One request as the fuzzer sends it: any method, path, headers and body bytes. */
export interface FuzzRequest {
  method: string;
  /** Path and query, already percent-encoded where a client would encode. */
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

export interface FuzzResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  elapsedMs: number;
}

/** Every request of the fuzz suites must be answered within this, on a loaded 2-core machine. */
export const FUZZ_ANSWER_TIMEOUT_MS = 15_000;

/** The largest single header value sent: several of them stay under Node's 16 KiB head limit. */
const HUGE_HEADER_CHARS = 3_000;
const HUGE_BODY_BYTES = 256 * 1024;

/** Sends one request on a fresh connection; rejects (a hang) when no answer comes within the timeout. */
export async function sendFuzzRequest(
  baseUrl: string,
  request: FuzzRequest,
  timeoutMs = FUZZ_ANSWER_TIMEOUT_MS,
): Promise<FuzzResponse> {
  const startedAt = Date.now();
  const { status, headers, body } = await plainRequest(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    timeoutMs,
  });
  return { status, headers, body, elapsedMs: Date.now() - startedAt };
}

/** Printable ASCII and Latin-1 (what an HTTP header value may carry), no control characters. */
const headerChar = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
);

/** Values a parser must survive: empty, numbers out of range, units wrong, Latin-1. */
const adversarialShortValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1.5',
    'NaN',
    'Infinity',
    '1e309',
    '99999999999999999999',
    '10x',
    '5s',
    '-5s',
    '100000d',
    'true',
    'false',
    'null',
    '{}',
    '[]',
    'parallelism=abc',
    'rate=-1, period=0s',
    'parallelism=1,parallelism=2',
    '* * * * *',
    '61 25 32 13 8',
    'https://',
    'http://127.0.0.1:1/x',
    'ftp://a.example/',
    'GET',
    'TRACE',
    'CONNECT',
  ),
  fc.string({ unit: headerChar, maxLength: 40 }),
);

/** Header values: the short adversarial ones, or a huge one. */
export const adversarialHeaderValue: fc.Arbitrary<string> = fc.oneof(
  adversarialShortValue,
  fc.string({ unit: headerChar, minLength: HUGE_HEADER_CHARS, maxLength: HUGE_HEADER_CHARS }),
);

/** A header set: each name once, or repeated with different values. */
export function adversarialHeaders(
  names: readonly string[],
): fc.Arbitrary<Record<string, string | string[]>> {
  return fc
    .array(
      fc.tuple(
        fc.constantFrom(...names),
        fc.oneof(adversarialHeaderValue, fc.array(adversarialHeaderValue, { minLength: 2, maxLength: 3 })),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => {
      const headers: Record<string, string | string[]> = {};
      // At most one huge value, so the whole head stays under Node's limit.
      let hugeSeen = false;
      for (const [name, value] of pairs) {
        const values = ([] as string[]).concat(value).filter((v) => {
          if (v.length < HUGE_HEADER_CHARS) return true;
          if (hugeSeen) return false;
          hugeSeen = true;
          return true;
        });
        if (values.length > 0) headers[name] = values.length === 1 ? values[0]! : values;
      }
      return headers;
    });
}

/** Bodies a JSON reader must survive. */
export const adversarialBody: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 3 }).map((text) => Buffer.from(text)),
  fc
    .constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'null', '""', '0', '{"__proto__":{"x":1}}')
    .map((t) => Buffer.from(t)),
  fc
    .integer({ min: 1_000, max: 20_000 })
    .map((depth) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`)),
  fc
    .integer({ min: 1_000, max: 20_000 })
    .map((depth) => Buffer.from(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)),
  fc.integer({ min: 64 * 1024, max: HUGE_BODY_BYTES }).map((n) => Buffer.from(`{"x":"${'y'.repeat(n)}"}`)),
  fc
    .constantFrom([0xff, 0xfe, 0xfd], [0xc3, 0x28], [0xe2, 0x82], [0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d])
    .map((b) => Buffer.from(b)),
  fc.uint8Array({ minLength: 1, maxLength: 2_048 }).map((b) => Buffer.from(b)),
);

/** Methods: the standard ones and an unknown token. */
export const anyMethod: fc.Arbitrary<string> = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'COPY',
  'PROPFIND',
);

/** A path segment a client could send: encoded unicode, dots, encoded slashes and NULs, huge. */
export const adversarialSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '.', '..', '%2e%2e', '%2F', '%00', '%ff', '%', '%zz', '~', '_all_docs', '_changes'),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 10 }).map(encodeURIComponent),
  fc.constant('a'.repeat(2_000)),
);

/**
 * A query string of known parameter names (cursors, counts, filters) with adversarial values, kept
 * short: a request line past Node's 16 KiB head limit is refused by Node itself (431, no body).
 */
export function adversarialQuery(names: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })),
        fc.oneof(adversarialShortValue, fc.string({ maxLength: 30 })),
      ),
      {
        maxLength: 4,
      },
    )
    .map((pairs) =>
      pairs.length === 0
        ? ''
        : `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
    );
}

/** One case in `every` is `value`, the others null (fc.option makes null the rare one). */
export const sometimes = <T>(value: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: every - 1 }, { arbitrary: value, weight: 1 });

/**
 * `base`, `<origin>/<prefix>/<namespace>/<name>` (the instance path's and the queue's form), with
 * its namespace (`mangle[0]` 0) or name (1) replaced by `mangle[1]`; as it is without a mangle.
 */
export function mangledBase(base: string, mangle: readonly [number, string] | null): string {
  if (!mangle) return base;
  const url = new URL(base);
  const parts = url.pathname.split('/'); // ['', prefix, namespace, name]
  parts[2 + mangle[0]] = mangle[1];
  return `${url.origin}${parts.join('/')}`;
}

/** Cases run per route, printed by each suite at its end (the issue's note records them). */
export class FuzzCaseCounter {
  private readonly counts = new Map<string, number>();
  private readonly statuses = new Map<number, number>();

  count(route: string): void {
    this.counts.set(route, (this.counts.get(route) ?? 0) + 1);
  }

  /** The answers' statuses, so the report shows the cases reached more than the first refusal. */
  answered(status: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  report(suite: string): string {
    const rows = [...this.counts.entries()].map(([route, n]) => `  ${String(n).padStart(5)}  ${route}`);
    const statuses = [...this.statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status} x${n}`)
      .join(', ');
    return `${suite}: ${this.total()} cases over ${this.counts.size} routes${statuses ? ` (answers: ${statuses})` : ''}\n${rows.join('\n')}`;
  }
}

/** A JSON object with a string field `error`: QStash's error shape. */
export function isQStashError(body: string): boolean {
  return hasStringFields(body, ['error']);
}

/** CouchDB's error shape, which the gateway's instance path answers in too: string `error` and `reason`. */
export function isCouchError(body: string): boolean {
  return hasStringFields(body, ['error', 'reason']);
}

/** The console API's error shape (console/http/errors.ts): string `error` and `message`. */
export function isConsoleError(body: string): boolean {
  return hasStringFields(body, ['error', 'message']);
}

function hasStringFields(body: string, fields: readonly string[]): boolean {
  try {
    const parsed = JSON.parse(body) as unknown;
    return (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      fields.every((f) => typeof (parsed as Record<string, unknown>)[f] === 'string')
    );
  } catch {
    return false;
  }
}

/**
 * Host headers for an instance's host form (`<name>.<namespace>.<domain>`): its own, with a label
 * mangled, or not a host at all.
 */
export function hostHeader(ref: { namespace: string; name: string }, domain: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(`${ref.name}.${ref.namespace}.${domain}`), weight: 4 },
    fc
      .tuple(fc.constantFrom(0, 1), adversarialSegment.map(decodeURIComponentOr))
      .map(
        ([i, label]) =>
          [ref.name, ref.namespace].map((l, j) => (j === i ? label : l)).join('.') + `.${domain}`,
      ),
    fc.constantFrom(
      `${ref.name}.${ref.namespace}.${domain}.`,
      `${ref.name.toUpperCase()}.${ref.namespace}.${domain}:80`,
      `x.${ref.name}.${ref.namespace}.${domain}`,
      `${ref.namespace}.${domain}`,
      domain,
      `${ref.name}.${ref.namespace}.${domain}:99999`,
      '[::1]:80',
      '',
    ),
    adversarialHeaderValue,
  );
}

/**
 * A label as it would appear in a Host header: the segment decoded where it decodes to what a
 * header may carry (Node's client refuses to send other characters), else as it is.
 */
function decodeURIComponentOr(segment: string): string {
  try {
    const decoded = decodeURIComponent(segment);
    return /^[\x20-\x7e\xa0-\xff]*$/.test(decoded) ? decoded : segment;
  } catch {
    return segment;
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/i;

/**
 * Whatever the fuzzer made, no URL it sends names a host other than loopback (the suite's
 * deliveries are real): any http(s) URL to another host, in a header, the publish path or a
 * body, becomes a closed loopback port.
 */
export function loopbackOnly(text: string): string {
  return text.replace(/https?:\/\/([^/\s"?#:]*)/gi, (whole, host: string) =>
    LOOPBACK.test(host) ? whole : 'http://127.0.0.1:1',
  );
}

/** Node's client refuses to send a header value with other characters (a NUL, a newline, UTF-16). */
const headerSafe = (value: string) => value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

/**
 * The request as it can be sent: its header values only of what a header may carry, and every URL
 * in it to loopback ({@link loopbackOnly}).
 */
export function sendableRequest(request: FuzzRequest): FuzzRequest {
  const safe = (value: string) => loopbackOnly(headerSafe(value));
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.map(safe) : safe(v)]),
  );
  const body = request.body && Buffer.from(loopbackOnly(request.body.toString('latin1')), 'latin1');
  // A URL percent-encoded in the path is one once the router decodes it.
  let path = loopbackOnly(request.path);
  try {
    const decoded = decodeURIComponent(path);
    if (loopbackOnly(decoded) !== decoded) path = loopbackOnly(decoded);
  } catch {
    // Not decodable: the router refuses it as it is.
  }
  return { ...request, path, headers, ...(body && { body }) };
}
