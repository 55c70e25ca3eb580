/**
 * An instance's response head, read once from raw bytes by the fast path's splice
 * (splice-connection.ts): the status, the framing that says where the body ends, and the lines the
 * gateway acts on. It is read in place, byte by byte, with no string for a line the gateway passes on
 * as it came: the client's head copies those lines (splice-response.ts). The instance is CouchDB
 * behind the gateway, not a client, so this reads what it sends (HTTP/1.x, CRLF lines, at most one
 * framing) and calls anything else broken: the exchange then ends as the full path ends an upstream
 * that broke off (a 502, or a cut connection).
 */

import { HeaderNameSet } from './header-name-set.js';
import { CR, HTAB, isTokenByte, LF, SP, skipBlankBytes, trimBlankBytes } from './header-chars.js';

/** Not a whole head yet: read more. */
export const RESPONSE_INCOMPLETE = 'incomplete';
/** Not a head the splice can frame: the exchange fails. */
export const RESPONSE_BROKEN = 'broken';

/** An instance's head is never this long; past it, it is broken rather than buffered for ever. */
const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** `HTTP/1.` before the minor version of the status line. */
const VERSION_PREFIX = Buffer.from('HTTP/1.', 'latin1');
/** Where the minor version is in `HTTP/1.x`. */
export const MINOR_VERSION_AT = VERSION_PREFIX.length;
/** `HTTP/1.x 200`: the status line's length without a reason phrase. */
export const STATUS_LINE_MIN = 12;
const COLON = 0x3a;
const DIGIT_0 = 0x30;
const DEL = 0x7f;

/** The headers that frame the body (and the connection), read here whatever the caller asks for. */
const FRAMING = new HeaderNameSet(['content-length', 'transfer-encoding', 'connection']);
/** The one Transfer-Encoding the splice frames, found as a name is found (a value holds no CR either). */
const CHUNKED = new HeaderNameSet(['chunked']);
const NO_LINES: readonly ResponseLine[] = [];

/** A header line the caller named (readResponseHead's `names`): where it is in the head, and its value. */
export interface ResponseLine {
  /** Its name, lower-cased, as the caller's set spells it. */
  readonly name: string;
  /** Offsets in the buffer: the line's first byte, its colon, and its CR. */
  readonly start: number;
  readonly nameEnd: number;
  readonly end: number;
  /** Without the blanks around it; a 0xa0 byte is part of the value, as llhttp reads it. */
  readonly value: string;
}

export interface ResponseHead {
  readonly status: number;
  /** Offset of the CR ending the status line; the header lines start 2 bytes after it. */
  readonly statusLineEnd: number;
  /** Offset just past the last header line's CRLF (of the blank line's CR). */
  readonly headerEnd: number;
  /** The lines whose names are in the reader's set, in order (usually none). */
  readonly lines: readonly ResponseLine[];
  /** The body's Content-Length; -1 without one. */
  readonly contentLength: number;
  readonly chunked: boolean;
  /** The instance ends the connection after this response (Connection: close, or HTTP/1.0). */
  readonly close: boolean;
  /** Offset in the buffer just past the head's blank line. */
  readonly bodyStart: number;
}

export type ResponseHeadReading = ResponseHead | typeof RESPONSE_INCOMPLETE | typeof RESPONSE_BROKEN;

/** Reads the response head at the start of `buf`, noting the lines named in `names`. */
export function readResponseHead(buf: Buffer, names: HeaderNameSet): ResponseHeadReading {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return buf.length > MAX_RESPONSE_HEAD_BYTES ? RESPONSE_BROKEN : RESPONSE_INCOMPLETE;
  const lineEnd = statusLineEnd(buf, end);
  if (lineEnd < 0) return RESPONSE_BROKEN;
  const http10 = buf[MINOR_VERSION_AT] === DIGIT_0;
  let lines: ResponseLine[] | undefined;
  let contentLength = -1;
  let chunked = false;
  let close = http10;
  for (let at = lineEnd + 2; at < end;) {
    let colon = at;
    while (colon < end && isTokenByte(buf[colon] as number)) colon++;
    if (colon === at || buf[colon] !== COLON) return RESPONSE_BROKEN;
    // A control in a value would be written on to the client (response splitting): only its CRLF ends it.
    let next = colon + 1;
    for (let c = buf[next] as number; c !== CR; c = buf[++next] as number)
      if ((c < SP && c !== HTAB) || c === DEL) return RESPONSE_BROKEN;
    if (buf[next + 1] !== LF) return RESPONSE_BROKEN;
    const valueStart = skipBlankBytes(buf, colon + 1, next);
    const valueEnd = trimBlankBytes(buf, valueStart, next);
    switch (FRAMING.match(buf, at, colon)) {
      case 'content-length':
        // Two lengths, or one beside chunked, is a response two parsers could end differently.
        if (contentLength >= 0) return RESPONSE_BROKEN;
        contentLength = digits(buf, valueStart, valueEnd);
        if (contentLength < 0) return RESPONSE_BROKEN;
        break;
      case 'transfer-encoding':
        if (chunked || CHUNKED.match(buf, valueStart, valueEnd) === undefined) return RESPONSE_BROKEN;
        chunked = true;
        break;
      case 'connection': {
        const tokens = buf.toString('latin1', valueStart, valueEnd).toLowerCase();
        if (tokens.includes('close')) close = true;
        else if (http10 && tokens.includes('keep-alive')) close = false;
        break;
      }
    }
    const name = names.match(buf, at, colon);
    if (name !== undefined) {
      const value = buf.toString('latin1', valueStart, valueEnd);
      (lines ??= []).push({ name, start: at, nameEnd: colon, end: next, value });
    }
    at = next + 2;
  }
  if (chunked && contentLength >= 0) return RESPONSE_BROKEN;
  return {
    status: (buf[9] as number) * 100 + (buf[10] as number) * 10 + (buf[11] as number) - DIGIT_0 * 111,
    statusLineEnd: lineEnd,
    headerEnd: end + 2,
    lines: lines ?? NO_LINES,
    contentLength,
    chunked,
    close,
    bodyStart: end + HEAD_END.length,
  };
}

/**
 * Every header line of a head readResponseHead took, each name lower-cased: for the rare response
 * whose Connection header names other headers, all of which the client's head leaves out.
 */
export function responseLines(buf: Buffer, head: ResponseHead): ResponseLine[] {
  const lines: ResponseLine[] = [];
  for (let at = head.statusLineEnd + 2; at < head.headerEnd;) {
    const colon = buf.indexOf(COLON, at);
    const end = buf.indexOf(CR, colon);
    const valueStart = skipBlankBytes(buf, colon + 1, end);
    lines.push({
      name: buf.toString('latin1', at, colon).toLowerCase(),
      start: at,
      nameEnd: colon,
      end,
      value: buf.toString('latin1', valueStart, trimBlankBytes(buf, valueStart, end)),
    });
    at = end + 2;
  }
  return lines;
}

/**
 * Where the status line `HTTP/1.[01] <3 digits>[ <reason>]` ends (its CR), or -1 when the head does
 * not start with one. The reason may hold obs-text (bytes 0x80-0xff, passed on as the full path
 * passes them) but no control or DEL.
 */
function statusLineEnd(buf: Buffer, end: number): number {
  if (
    end < STATUS_LINE_MIN ||
    buf.compare(VERSION_PREFIX, 0, VERSION_PREFIX.length, 0, MINOR_VERSION_AT) !== 0
  )
    return -1;
  const minor = buf[MINOR_VERSION_AT];
  if ((minor !== DIGIT_0 && minor !== DIGIT_0 + 1) || buf[8] !== SP) return -1;
  if (!isDigit(buf[9]) || !isDigit(buf[10]) || !isDigit(buf[11])) return -1;
  if (buf[12] === CR) return 12;
  if (buf[12] !== SP) return -1;
  let at = 13;
  for (let c = buf[at] as number; c !== CR; c = buf[++at] as number)
    if ((c < SP && c !== HTAB) || c === DEL) return -1;
  return buf[at + 1] === LF ? at : -1;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= DIGIT_0 && c <= DIGIT_0 + 9;
}

/** `buf[start, end)` as a number when it is 1 to 15 digits, else -1. */
function digits(buf: Buffer, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i] as number;
    if (!isDigit(c)) return -1;
    n = n * 10 + c - DIGIT_0;
  }
  return n;
}

/** Whether a response to `method` with `status` has no body whatever its headers say (RFC 9112 6.3). */
export function hasNoBody(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
}
