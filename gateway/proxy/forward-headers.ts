import { HeaderNameSet } from '../http/header-name-set.js';
import { responseLines, type ResponseHead } from '../http/response-head.js';
import type { ClientHeadEdits } from '../http/splice-exchange.js';
import type { ForwardedFor } from './forwarded-for.js';

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

/**
 * Set by the gateway itself rather than passed on as sent: from what it saw, or from a trusted
 * proxy's values as deriveForwardedFor chose them.
 */
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

/**
 * Whether a request header (its lower-case name, when specialHeaderName gave one) is left out of
 * what the instance gets: hop-by-hop, or one of the X-Forwarded-* the gateway writes itself.
 */
function isDroppedUpstream(special: string | undefined): boolean {
  return (
    special !== undefined &&
    (special === 'x-forwarded-for' || HOP_BY_HOP.has(special) || FORWARDED_BY_GATEWAY.has(special))
  );
}

/** X-Forwarded-For's value for the instance: the chain a trusted proxy sent (if any), then the peer. */
function forwardedForValue(forwarded: ForwardedFor, chain: string | undefined): string {
  const client = forwarded.remoteAddress ?? 'unknown';
  return chain === undefined ? client : `${chain}, ${client}`;
}

/** Adds an X-Forwarded-For value to the chain kept from a trusted proxy (anyone else could forge it). */
function addToChain(forwarded: ForwardedFor, chain: string | undefined, value: string): string | undefined {
  if (!forwarded.fromTrustedProxy) return chain;
  return chain === undefined ? value : `${chain}, ${value}`;
}

/**
 * The request headers for the instance, as a flat [name, value, ...] list in the client's order
 * and spelling: everything but hop-by-hop headers (and those the Connection header names), with
 * X-Forwarded-Proto/Host set and the client's address appended to X-Forwarded-For; the chain the
 * peer sent is kept only when it is a trusted proxy. Authorization and Cookie pass untouched.
 * One pass over the headers; a second only when Connection names headers, which clients rarely do.
 */
export function buildUpstreamHeaders(rawHeaders: readonly string[], forwarded: ForwardedFor): string[] {
  let headers: string[] = [];
  let named: Set<string> | undefined;
  let chain: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const value = rawHeaders[i + 1] as string;
    const special = specialHeaderName(name);
    if (special === 'x-forwarded-for') chain = addToChain(forwarded, chain, value);
    if (special === 'connection') named = addConnectionNamed(value, named);
    if (!isDroppedUpstream(special)) headers.push(name, value);
  }
  if (named !== undefined) headers = withoutNamed(headers, named);
  headers.push('X-Forwarded-For', forwardedForValue(forwarded, chain));
  headers.push('X-Forwarded-Proto', forwarded.proto);
  if (forwarded.host !== undefined) headers.push('X-Forwarded-Host', forwarded.host);
  return headers;
}

/** The client's request head as raw-request-head.ts read it: its text and where its lines start. */
export interface ClientHeadText {
  readonly rawHeaders: readonly string[];
  readonly text: string;
  readonly linesStart: number;
}

/**
 * buildUpstreamHeaders' rules for the fast path, as the head's lines (each with its CRLF): the
 * client's lines copied as they came, a run of kept lines one slice of its text, only the dropped
 * ones left out, and the X-Forwarded-* lines appended. No pairs and no line is written anew: this
 * runs for every request. The raw head takes a Connection header only as one `close` or
 * `keep-alive` (raw-request-head.ts), which name no other header, so none is left out for that.
 */
export function upstreamHeadLines(head: ClientHeadText, forwarded: ForwardedFor): string {
  const { rawHeaders, text } = head;
  let lines = '';
  let chain: string | undefined;
  let runStart = head.linesStart;
  let at = runStart;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    let next = text.indexOf('\r\n', at);
    if (next < 0) next = text.length;
    const special = specialHeaderName(rawHeaders[i] as string);
    if (isDroppedUpstream(special)) {
      if (special === 'x-forwarded-for') chain = addToChain(forwarded, chain, rawHeaders[i + 1] as string);
      if (runStart < at) lines += text.slice(runStart, at);
      runStart = next + 2;
    }
    at = next + 2;
  }
  // The last line ends the text without its CRLF.
  if (runStart < text.length) lines += `${text.slice(runStart)}\r\n`;
  lines += `X-Forwarded-For: ${forwardedForValue(forwarded, chain)}\r\nX-Forwarded-Proto: ${forwarded.proto}\r\n`;
  if (forwarded.host !== undefined) lines += `X-Forwarded-Host: ${forwarded.host}\r\n`;
  return lines;
}

/** How the response headers that carry the instance's own address are rewritten for the client. */
export interface ResponseHeaderRewrites {
  locationForClient(location: string): string;
  setCookieForClient(cookie: string): string;
}

/**
 * The response headers for the client, from a raw [name, value, ...] list: undici's buffers, or the
 * strings of the fast path's response-head.ts. Hop-by-hop headers (and those the Connection header
 * names) dropped, Location and Set-Cookie rewritten, `extra` appended. latin1 maps bytes to code
 * units one to one, so values pass through byte for byte. One pass, like buildUpstreamHeaders.
 */
export function buildClientHeaders(
  raw: ReadonlyArray<Buffer | string>,
  rewrites: ResponseHeaderRewrites,
  extra: readonly string[] | undefined,
): string[] {
  let headers: string[] = [];
  let named: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = latin1(raw[i] as Buffer | string);
    let value = latin1(raw[i + 1] as Buffer | string);
    const special = specialHeaderName(name);
    if (special !== undefined) {
      if (special === 'connection') named = addConnectionNamed(value, named);
      const kept = clientHeaderValue(special, value, rewrites);
      if (kept === undefined) continue;
      value = kept;
    }
    headers.push(name, value);
  }
  if (named !== undefined) headers = withoutNamed(headers, named);
  if (extra !== undefined) headers.push(...extra);
  return headers;
}

/** The response header names whose lines the client's head may change: hop-by-hop, Location, Set-Cookie. */
export const CLIENT_RESPONSE_LINE_NAMES = new HeaderNameSet([...HOP_BY_HOP, 'location', 'set-cookie']);

const NO_VALUES: ReadonlyArray<string | undefined> = [];

/**
 * buildClientHeaders' rules for the fast path, which copies the instance's response head as it came
 * but for what these edits say (splice-response.ts): `head.lines` are the lines named in
 * CLIENT_RESPONSE_LINE_NAMES; when a Connection header names other headers, every line is listed.
 */
export function clientHeadEdits(
  buf: Buffer,
  head: ResponseHead,
  rewrites: ResponseHeaderRewrites,
  extraLines: string,
): ClientHeadEdits {
  // The usual CouchDB head names none of these lines: its values would be one more array a response.
  if (head.lines.length === 0) return { lines: head.lines, values: NO_VALUES, extraLines };
  let named: Set<string> | undefined;
  for (const line of head.lines)
    if (line.name === 'connection') named = addConnectionNamed(line.value, named);
  const lines = named === undefined ? head.lines : responseLines(buf, head);
  const values = lines.map((line) =>
    named?.has(line.name) ? undefined : clientHeaderValue(line.name, line.value, rewrites),
  );
  return { lines, values, extraLines };
}

/** A response header's value for the client by its lower-case name: undefined for a hop-by-hop one. */
function clientHeaderValue(
  lowerName: string,
  value: string,
  rewrites: ResponseHeaderRewrites,
): string | undefined {
  if (HOP_BY_HOP.has(lowerName)) return undefined;
  if (lowerName === 'location') return rewrites.locationForClient(value);
  if (lowerName === 'set-cookie') return rewrites.setCookieForClient(value);
  return value;
}

function latin1(text: Buffer | string): string {
  return typeof text === 'string' ? text : text.toString('latin1');
}

/** Connection values that name no header: the connection's own options. */
const PLAIN_CONNECTION: ReadonlySet<string> = new Set(['keep-alive', 'close']);

/**
 * Adds the header names a Connection header value lists to `named` (keep-alive and close name no
 * header). The usual value is just one of those two, and is recognised without splitting it.
 */
function addConnectionNamed(value: string, named: Set<string> | undefined): Set<string> | undefined {
  if ((value.length === 10 || value.length === 5) && PLAIN_CONNECTION.has(value.toLowerCase())) return named;
  for (const token of value.split(',')) {
    const lower = token.trim().toLowerCase();
    if (lower !== '' && !PLAIN_CONNECTION.has(lower)) (named ??= new Set()).add(lower);
  }
  return named;
}

/** `headers` without those a Connection header named. */
function withoutNamed(headers: readonly string[], named: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] as string;
    if (!named.has(name.toLowerCase())) kept.push(name, headers[i + 1] as string);
  }
  return kept;
}
