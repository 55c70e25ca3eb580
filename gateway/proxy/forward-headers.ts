/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and are never forwarded,
 * in either direction. `expect` is answered by the gateway's own server (100 Continue) and undici
 * refuses to send it; `proxy-connection` is the non-standard spelling some clients still send.
 */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** Set by the gateway itself, from what it saw, rather than passed on as the client sent them. */
const FORWARDED_BY_GATEWAY: ReadonlySet<string> = new Set(['x-forwarded-proto', 'x-forwarded-host']);

/**
 * Every lower-case name the gateway treats specially, grouped by length. Most header names have a
 * length none of these has and are told apart without a lower-cased copy: this runs for every
 * header of every request and response.
 */
const SPECIAL_NAMES_BY_LENGTH: ReadonlyArray<ReadonlySet<string> | undefined> = (() => {
  const byLength: Array<Set<string> | undefined> = [];
  const special = [...HOP_BY_HOP, ...FORWARDED_BY_GATEWAY, 'x-forwarded-for', 'location', 'set-cookie'];
  for (const name of special) (byLength[name.length] ??= new Set()).add(name);
  return byLength;
})();

/**
 * `name` lower-cased when the gateway treats it specially (hop-by-hop, X-Forwarded-*, Location,
 * Set-Cookie); undefined for any other header.
 */
export function specialHeaderName(name: string): string | undefined {
  const candidates = SPECIAL_NAMES_BY_LENGTH[name.length];
  if (candidates === undefined) return undefined;
  const lower = name.toLowerCase();
  return candidates.has(lower) ? lower : undefined;
}

export interface ForwardedFor {
  /** The client's address as the gateway's socket saw it. */
  remoteAddress: string | undefined;
  /** `http` or `https`: how the client reached the gateway. */
  proto: string;
  /** The Host the client asked for. */
  host: string | undefined;
}

/**
 * The request headers for the instance, as a flat [name, value, ...] list in the client's order
 * and spelling: everything but hop-by-hop headers (and those the Connection header names), with
 * X-Forwarded-For extended and X-Forwarded-Proto/Host set. Authorization and Cookie pass untouched.
 */
export function buildUpstreamHeaders(rawHeaders: readonly string[], forwarded: ForwardedFor): string[] {
  const named = connectionNamedHeaders(rawHeaders);
  const headers: string[] = [];
  let forwardedFor: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    const special = specialHeaderName(name);
    if (special === 'x-forwarded-for') {
      forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
      continue;
    }
    if (special !== undefined && (HOP_BY_HOP.has(special) || FORWARDED_BY_GATEWAY.has(special))) continue;
    if (named?.has(name.toLowerCase())) continue;
    headers.push(name, value);
  }
  const client = forwarded.remoteAddress ?? 'unknown';
  headers.push('X-Forwarded-For', forwardedFor === undefined ? client : `${forwardedFor}, ${client}`);
  headers.push('X-Forwarded-Proto', forwarded.proto);
  if (forwarded.host !== undefined) headers.push('X-Forwarded-Host', forwarded.host);
  return headers;
}

/** Whether a response header name may be passed to the client. */
export function isEndToEndHeader(
  lowerName: string,
  connectionNamed: ReadonlySet<string> | undefined,
): boolean {
  return !HOP_BY_HOP.has(lowerName) && !(connectionNamed?.has(lowerName) ?? false);
}

/** Header names listed in Connection headers (beyond keep-alive/close), which are hop-by-hop too. */
export function connectionNamedHeaders(rawHeaders: readonly string[]): Set<string> | undefined {
  let named: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (specialHeaderName(rawHeaders[i] as string) !== 'connection') continue;
    for (const token of (rawHeaders[i + 1] as string).split(',')) {
      const lower = token.trim().toLowerCase();
      if (lower !== '' && lower !== 'close' && lower !== 'keep-alive') (named ??= new Set()).add(lower);
    }
  }
  return named;
}
