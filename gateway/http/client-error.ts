import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { CouchErrorBody } from './error-response.js';

/**
 * Node's parser refuses a request before any handler sees it: a head past maxHeaderSize
 * (SETTEE_GATEWAY_MAX_HEADER_BYTES), a head that took too long, bytes that are no HTTP. Node's own
 * answer is a bare status line; this one says why in CouchDB's error shape (which a QStash client
 * reads too: it has `error`), so a client of either API sees what to change. The connection
 * closes: the parser cannot tell where the next request would start.
 *
 * Two errors come while an answer is still owed on the connection, and a 400 there would be written
 * into that answer or in place of it (a stored PUT answered "not valid HTTP"):
 * - HPE_CLOSED_CONNECTION: bytes after a request that asked to close the connection (`Connection:
 *   close`, or `Proxy-Connection: close`, which llhttp reads alike). Nothing is wrong with that
 *   request; what follows it is not to be served (RFC 9112 §9.6). Node's own handling would drop
 *   the answer too (it destroys the socket), so nothing is done: the answer is sent whole and
 *   node:http closes the connection after it, as that request asked.
 * - any other error once the answer's head is out: no status can be told any more, so the
 *   connection is cut (as node:http does without a listener) rather than corrupted.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const code = err.code ?? '';
  if (code === 'HPE_CLOSED_CONNECTION') return;
  // The client went away (nothing to say), or an answer is under way (no room to say it).
  if (code === 'ECONNRESET' || !socket.writable || answerUnderWay(socket)) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorResponse(code));
}

/**
 * The whole answer, closing the connection, for node's parser error `code` (a head too large or too
 * slow, or bytes that are no HTTP); the fast path answers a head cut by the client's FIN with it too.
 */
export function clientErrorResponse(code: string): string {
  const [status, text, body]: [number, string, CouchErrorBody] =
    code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          {
            error: 'request_header_fields_too_large',
            reason: 'the request line and headers are larger than this gateway takes',
          },
        ]
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            408,
            'Request Timeout',
            { error: 'request_timeout', reason: 'the request head did not arrive in time' },
          ]
        : [400, 'Bad Request', { error: 'bad_request', reason: 'the request is not valid HTTP' }];
  const json = `${JSON.stringify(body)}\n`;
  return `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`;
}

/**
 * node:http keeps the answer it is writing on the socket (`_httpMessage`, the field its own
 * clientError default reads); there is no public signal for it on a socket.
 */
function answerUnderWay(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
}
