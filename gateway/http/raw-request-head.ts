/**
 * A request head read from raw bytes, for a proxy that splices sockets instead of going through
 * node:http (docs/data-path.md, Option A). It is a second HTTP/1.1 parser beside Node's llhttp, so
 * it is a request-smuggling surface: two parsers that disagree on where a request ends let a client
 * hide a request inside another one's body. Its rule is that it never takes a head llhttp would
 * refuse or frame differently. It takes only the plain, common shape: one of a few methods, an
 * origin-form target, HTTP/1.1, `name: value` lines of token names and visible-ASCII values, CRLF
 * line ends, one Host, at most one Content-Length (digits only) or one `Transfer-Encoding: chunked`, never
 * both, no Expect, no Upgrade, no Proxy-Connection. Everything else is *declined*: given back whole,
 * for node:http to read (and refuse, where llhttp refuses: obsolete line folding, bare LF, invalid names or values,
 * conflicting framing, an oversized head). Declining is always safe; taking is what must be exact.
 * test/unit/gateway/http/raw-request-head-llhttp.test.ts checks this against Node's own parser.
 */

import { CR, isToken, isVisibleValue, LF, SP, skipBlanks, trimBlanks } from './header-chars.js';

/** Not a whole head yet: read more, unless the buffer already holds maxHeadBytes. */
export const HEAD_INCOMPLETE = 'incomplete';
/** Not a head this reader takes: hand the bytes, unread, to node:http. */
export const HEAD_DECLINED = 'declined';

export interface RawRequestHead {
  readonly method: string;
  /** The request target as sent: origin form, starting with `/`. */
  readonly target: string;
  /** Flat [name, value, ...] in the client's order and spelling, values without surrounding blanks. */
  readonly rawHeaders: string[];
  /** The head as read (latin1), without the blank line: the fast path copies its lines from it. */
  readonly text: string;
  /** Where the first header line starts in `text`; line i holds rawHeaders[2i] and [2i + 1]. */
  readonly linesStart: number;
  /** The body's length when it has a Content-Length; 0 without one or when chunked. */
  readonly contentLength: number;
  readonly chunked: boolean;
  /** The Host header's value; undefined without one. */
  readonly host: string | undefined;
  /** `Connection: close`: the connection ends after this exchange. */
  readonly close: boolean;
  /** Offset in the buffer just past the head's blank line: where the body (or the next request) starts. */
  readonly bodyStart: number;
}

export type HeadReading = RawRequestHead | typeof HEAD_INCOMPLETE | typeof HEAD_DECLINED;

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** Beyond 15 digits a length may pass 2^53; no body the gateway forwards is that long. */
const MAX_CONTENT_LENGTH_DIGITS = 15;

/** The methods taken; llhttp knows more (and refuses unknown ones), all of which are declined. */
const METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'COPY',
  'OPTIONS',
  'PATCH',
]);

/**
 * Reads the head at the start of `buf`. `maxHeadBytes` is the server's maxHeaderSize: a head that
 * is not complete within it, or is longer, is declined (node:http answers it 431).
 */
export function readRawRequestHead(buf: Buffer, maxHeadBytes: number): HeadReading {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) {
    // A head that ends lines with a bare LF never shows CRLFCRLF: decline it now, not at the limit.
    return buf.length >= maxHeadBytes || hasBareLf(buf, buf.length) ? HEAD_DECLINED : HEAD_INCOMPLETE;
  }
  if (end + HEAD_END.length > maxHeadBytes) return HEAD_DECLINED;
  const head = buf.toString('latin1', 0, end);
  const lineEnd = head.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? head : head.slice(0, lineEnd);
  const methodEnd = requestLine.indexOf(' ');
  const targetEnd = requestLine.indexOf(' ', methodEnd + 1);
  if (methodEnd < 0 || targetEnd < 0) return HEAD_DECLINED;
  const method = requestLine.slice(0, methodEnd);
  const target = requestLine.slice(methodEnd + 1, targetEnd);
  if (
    !METHODS.has(method) ||
    requestLine.slice(targetEnd + 1) !== 'HTTP/1.1' ||
    !isOriginFormTarget(target)
  ) {
    return HEAD_DECLINED;
  }
  const rawHeaders: string[] = [];
  let contentLength = -1;
  let chunked = false;
  let host: string | undefined;
  let hosts = 0;
  let close = false;
  for (let at = lineEnd + 2; lineEnd >= 0 && at < end;) {
    let next = head.indexOf('\r\n', at);
    if (next < 0) next = end;
    const colon = head.indexOf(':', at);
    if (colon <= at || colon > next || !isToken(head, at, colon)) return HEAD_DECLINED;
    const valueStart = skipBlanks(head, colon + 1, next);
    const valueEnd = trimBlanks(head, valueStart, next);
    if (!isVisibleValue(head, valueStart, valueEnd)) return HEAD_DECLINED;
    const name = head.slice(at, colon);
    const value = head.slice(valueStart, valueEnd);
    rawHeaders.push(name, value);
    at = next + 2;
    // Only names of these lengths matter here; the rest are not lower-cased at all.
    if (name.length !== 4 && name.length !== 6 && name.length !== 7 && name.length !== 10 && name.length < 14)
      continue;
    switch (name.toLowerCase()) {
      case 'host':
        host = value;
        hosts += 1;
        break;
      // llhttp refuses a tab after either's value (a space it takes): declined, not trimmed.
      case 'content-length':
        if (contentLength >= 0 || !isLength(value) || hasTab(head, valueEnd, next)) return HEAD_DECLINED;
        contentLength = Number(value);
        break;
      case 'transfer-encoding':
        if (chunked || value.toLowerCase() !== 'chunked' || hasTab(head, valueEnd, next))
          return HEAD_DECLINED;
        chunked = true;
        break;
      // One token, close or keep-alive; a list (an `upgrade` in it too) is declined, not read as
      // llhttp reads it, token by token. A tab after it is declined: to llhttp `close<TAB>` is no
      // close token, so it keeps the connection this reader would end.
      case 'connection': {
        const token = value.toLowerCase();
        if (token === 'close') close = true;
        else if (token !== 'keep-alive') return HEAD_DECLINED;
        if (hasTab(head, valueEnd, next)) return HEAD_DECLINED;
        break;
      }
      // llhttp reads Proxy-Connection as Connection (a close in it ends the connection): declined.
      case 'proxy-connection':
      case 'expect':
      case 'upgrade':
        return HEAD_DECLINED;
    }
  }
  // No Host or two are node:http's 400 (request-head.ts); a Content-Length beside chunked is llhttp's.
  if (hosts !== 1 || (chunked && contentLength >= 0)) return HEAD_DECLINED;
  return {
    method,
    target,
    rawHeaders,
    text: head,
    linesStart: lineEnd + 2,
    contentLength: Math.max(contentLength, 0),
    chunked,
    host,
    close,
    bodyStart: end + HEAD_END.length,
  };
}

/** Whether a LF in the first `length` bytes lacks its CR. */
function hasBareLf(buf: Buffer, length: number): boolean {
  for (let at = buf.indexOf(LF); at >= 0 && at < length; at = buf.indexOf(LF, at + 1))
    if (at === 0 || buf[at - 1] !== CR) return true;
  return false;
}

/** `/` then visible ASCII: no blanks, controls or bytes above 0x7e, which parsers read differently. */
function isOriginFormTarget(target: string): boolean {
  if (target.charCodeAt(0) !== 0x2f) return false;
  for (let i = 1; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= SP || c >= 0x7f) return false;
  }
  return true;
}

function hasTab(text: string, start: number, end: number): boolean {
  const at = text.indexOf('\t', start);
  return at >= 0 && at < end;
}

function isLength(value: string): boolean {
  if (value.length === 0 || value.length > MAX_CONTENT_LENGTH_DIGITS) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}
