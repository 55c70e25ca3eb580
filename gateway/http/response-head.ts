/**
 * An instance's response head, read once from raw bytes by the fast path's splice
 * (splice-connection.ts): the status, the headers for the gateway's rewrites, and the framing that
 * says where the body ends. The instance is CouchDB behind the gateway, not a client, so this reads
 * what it sends (HTTP/1.x, CRLF lines, at most one framing) and calls anything else broken: the
 * exchange then ends as the full path ends an upstream that broke off (a 502, or a cut connection).
 */

import { isResponseFieldValue, isToken, skipBlanks, trimBlanks } from './header-chars.js';

/** Not a whole head yet: read more. */
export const RESPONSE_INCOMPLETE = 'incomplete';
/** Not a head the splice can frame: the exchange fails. */
export const RESPONSE_BROKEN = 'broken';

/** An instance's head is never this long; past it, it is broken rather than buffered for ever. */
const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

export interface ResponseHead {
  readonly status: number;
  readonly statusText: string;
  /** Flat [name, value, ...] as sent, values without surrounding blanks. */
  readonly rawHeaders: string[];
  /** The body's Content-Length; -1 without one. */
  readonly contentLength: number;
  readonly chunked: boolean;
  /** The instance ends the connection after this response (Connection: close, or HTTP/1.0). */
  readonly close: boolean;
  /** Offset in the buffer just past the head's blank line. */
  readonly bodyStart: number;
}

export type ResponseHeadReading = ResponseHead | typeof RESPONSE_INCOMPLETE | typeof RESPONSE_BROKEN;

/** Reads the response head at the start of `buf`. */
export function readResponseHead(buf: Buffer): ResponseHeadReading {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return buf.length > MAX_RESPONSE_HEAD_BYTES ? RESPONSE_BROKEN : RESPONSE_INCOMPLETE;
  const head = buf.toString('latin1', 0, end);
  const lineEnd = head.indexOf('\r\n');
  const status = STATUS_LINE.exec(lineEnd < 0 ? head : head.slice(0, lineEnd));
  // A control in the status text or a header would be written on to the client (response splitting).
  if (status === null || !isResponseFieldValue(status[3] ?? '', 0, status[3]?.length ?? 0))
    return RESPONSE_BROKEN;
  const rawHeaders: string[] = [];
  let contentLength = -1;
  let chunked = false;
  let close = status[1] === '0';
  for (let at = lineEnd + 2; lineEnd >= 0 && at < end;) {
    let next = head.indexOf('\r\n', at);
    if (next < 0) next = end;
    const colon = head.indexOf(':', at);
    if (
      colon <= at ||
      colon > next ||
      !isToken(head, at, colon) ||
      !isResponseFieldValue(head, colon + 1, next)
    )
      return RESPONSE_BROKEN;
    const name = head.slice(at, colon);
    // One slice, without the blanks around it; a 0xa0 byte is part of the value, as llhttp reads it.
    const valueStart = skipBlanks(head, colon + 1, next);
    const value = head.slice(valueStart, trimBlanks(head, valueStart, next));
    rawHeaders.push(name, value);
    at = next + 2;
    if (name.length !== 10 && name.length !== 14 && name.length !== 17) continue;
    switch (name.toLowerCase()) {
      case 'content-length':
        // Two lengths, or one beside chunked, is a response two parsers could end differently.
        if (contentLength >= 0 || !/^\d{1,15}$/.test(value)) return RESPONSE_BROKEN;
        contentLength = Number(value);
        break;
      case 'transfer-encoding':
        if (chunked || value.toLowerCase() !== 'chunked') return RESPONSE_BROKEN;
        chunked = true;
        break;
      case 'connection': {
        const tokens = value.toLowerCase();
        if (tokens.includes('close')) close = true;
        else if (status[1] === '0' && tokens.includes('keep-alive')) close = false;
        break;
      }
    }
  }
  if (chunked && contentLength >= 0) return RESPONSE_BROKEN;
  return {
    status: Number(status[2]),
    statusText: status[3] ?? '',
    rawHeaders,
    contentLength,
    chunked,
    close,
    bodyStart: end + HEAD_END.length,
  };
}

/** Whether a response to `method` with `status` has no body whatever its headers say (RFC 9112 6.3). */
export function hasNoBody(method: string, status: number): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200);
}
