import { STATUS_CODES } from 'node:http';
import { type BodyFraming, writeKept } from './body-framing.js';
import { buildErrorResponse } from './error-response.js';
import { CR, LF, SP } from './header-chars.js';
import { MINOR_VERSION_AT, STATUS_LINE_MIN, type ResponseHead, type ResponseLine } from './response-head.js';
import type { ClientHeadEdits } from './splice-exchange.js';

/**
 * What the fast path (splice-connection.ts) writes to its client: the instance's response head as
 * the client gets it, the body bytes after it, and the error answer of an exchange that failed.
 */

/** The client's response head: the instance's, as `edits` change it, then its framing. */
export interface ClientHead {
  readonly response: ResponseHead;
  readonly edits: ClientHeadEdits;
  readonly chunked: boolean;
  readonly close: boolean;
}

/** The client's line says 1.1 whatever the instance's said. */
const DIGIT_1 = 0x31;
/** The framing lines and the blank line that end the client's head, by `chunked * 2 + close`. */
const HEAD_TAILS = [
  '\r\n',
  'Connection: close\r\n\r\n',
  'Transfer-Encoding: chunked\r\n\r\n',
  'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
];

/**
 * The client's response head from the instance's (at the start of `instanceHead`), with `room` bytes
 * left at its end for the body bytes that leave with it. The status line and each run of header lines
 * not edited are copied as bytes (the status line's version made 1.1): only an edited line (a
 * rewritten Location or Set-Cookie) is written anew, `name: value`, with the instance's spelling of
 * the name. The usual head is one copy and two short writes.
 */
export function clientResponseHead(instanceHead: Buffer, head: ClientHead, room: number): Buffer {
  const { response, edits } = head;
  const { lines, values, extraLines } = edits;
  // A status line without a reason phrase: the client's line gets the blank before an empty one.
  const bare = response.statusLineEnd === STATUS_LINE_MIN;
  const tail = HEAD_TAILS[(head.chunked ? 2 : 0) + (head.close ? 1 : 0)] as string;
  let length = response.headerEnd + (bare ? 1 : 0) + extraLines.length + tail.length;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as ResponseLine;
    const value = values[i];
    if (value === line.value) continue;
    length -= line.end + 2 - line.start;
    if (value !== undefined) length += line.nameEnd - line.start + value.length + 4;
  }

  const out = Buffer.allocUnsafe(length + room);
  let at = 0;
  // A run of bytes as they came, from `copied` up to the next edited line.
  let copied = 0;
  if (bare) {
    at = instanceHead.copy(out, 0, 0, STATUS_LINE_MIN);
    out[at++] = SP;
    copied = STATUS_LINE_MIN;
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as ResponseLine;
    const value = values[i];
    if (value === line.value) continue;
    at += instanceHead.copy(out, at, copied, line.start);
    copied = line.end + 2;
    if (value === undefined) continue;
    at += instanceHead.copy(out, at, line.start, line.nameEnd);
    at += out.write(': ', at, 'latin1');
    at += out.write(value, at, 'latin1');
    out[at++] = CR;
    out[at++] = LF;
  }
  if (copied < response.headerEnd) at += instanceHead.copy(out, at, copied, response.headerEnd);
  out[MINOR_VERSION_AT] = DIGIT_1;
  if (extraLines.length > 0) at += out.write(extraLines, at, 'latin1');
  out.write(tail, at, 'latin1');
  return out;
}

/**
 * Writes the response body bytes `chunk[start, last)`, less what `framing` dropped, after `head`
 * (the client's response head from the instance's at the start of `chunk`, when this read holds
 * it). Returns false when the client's socket is full.
 */
export function writeResponseBytes(
  socket: { write(bytes: Buffer): boolean },
  framing: BodyFraming,
  chunk: Buffer,
  start: number,
  last: number,
  head: ClientHead | undefined,
): boolean {
  if (head === undefined) return writeKept(socket, framing, chunk, start, last);
  if (framing.dropped.length > 0) {
    // Dropped trailers or extensions (rare): the head goes first, then the bytes kept.
    const flowing = socket.write(clientResponseHead(chunk, head, 0));
    return writeKept(socket, framing, chunk, start, last) && flowing;
  }
  // The head and the body bytes of its read as one buffer, for one plain write: corked, a string and
  // a buffer went out through writev, with Writable's buffering on the way, and cost more.
  const bytes = clientResponseHead(chunk, head, last - start);
  chunk.copy(bytes, bytes.length - (last - start), start, last);
  return socket.write(bytes);
}

/**
 * The whole error answer for a failed exchange's `answer` (as exchange.failed() gives it), with no
 * body for a HEAD request. It ends the connection: the request body may not have been read whole,
 * so nothing after it on this connection can be framed.
 */
export function failedExchangeResponse(
  answer: unknown,
  options: { method: string | undefined; retryAfterSeconds: number },
): string {
  const { status, headers, body } = buildErrorResponse(answer, {
    retryAfterSeconds: options.retryAfterSeconds,
  });
  const text = options.method === 'HEAD' ? '' : `${JSON.stringify(body)}\n`;
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (const name of Object.keys(headers)) head += `${name}: ${headers[name]}\r\n`;
  return `${head}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}
