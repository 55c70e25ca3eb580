import { STATUS_CODES } from 'node:http';
import { type BodyFraming, writeKept } from './body-framing.js';
import { buildErrorResponse } from './error-response.js';
import type { ResponseHead } from './response-head.js';

/**
 * What the fast path (splice-connection.ts) writes to its client: the instance's response head as
 * the client gets it, the body bytes after it, and the error answer of an exchange that failed.
 */

/** The client's response head: the instance's status, `headers` (flat [name, value, ...]) and framing. */
export function clientResponseHead(
  head: ResponseHead,
  headers: string[],
  framing: { chunked: boolean; close: boolean },
): string {
  let text = `HTTP/1.1 ${head.status} ${head.statusText}\r\n`;
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  if (framing.chunked) text += 'Transfer-Encoding: chunked\r\n';
  if (framing.close) text += 'Connection: close\r\n';
  return `${text}\r\n`;
}

/**
 * Writes the response body bytes `chunk[start, last)`, less what `framing` dropped, after `head`
 * (the client's response head, which leaves with the body bytes of the same read). Returns false
 * when the client's socket is full.
 */
export function writeResponseBytes(
  socket: { write(bytes: Buffer | string, encoding?: BufferEncoding): boolean },
  framing: BodyFraming,
  chunk: Buffer,
  start: number,
  last: number,
  head: string | undefined,
): boolean {
  let flowing = true;
  if (framing.dropped.length > 0) {
    // Dropped trailers or extensions (rare): the head goes first, then the bytes kept.
    if (head !== undefined) flowing = socket.write(head, 'latin1');
    flowing = writeKept(socket, framing, chunk, start, last) && flowing;
  } else {
    const bytes = head === undefined ? chunk.subarray(start, last) : withHead(head, chunk, start, last);
    if (bytes.length > 0) flowing = socket.write(bytes);
  }
  return flowing;
}

/**
 * The response head and the body bytes of its read as one buffer, for one plain write: corked, a
 * string and a buffer went out through writev, with Writable's buffering on the way; one buffer
 * cost less (bench/gateway-hybrid.ts, the commit that made it says how much).
 */
function withHead(head: string, chunk: Buffer, start: number, end: number): Buffer {
  const bytes = Buffer.allocUnsafe(head.length + end - start);
  bytes.write(head, 0, 'latin1');
  chunk.copy(bytes, head.length, start, end);
  return bytes;
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
