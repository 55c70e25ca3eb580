import type { Socket } from 'node:net';
import type { CouchErrorBody } from './error-response.js';

/**
 * Node's parser refuses a request before any handler sees it: a head past maxHeaderSize
 * (SETTEE_GATEWAY_MAX_HEADER_BYTES), a head that took too long, bytes that are no HTTP. Node's own
 * answer is a bare status line; this one says why in CouchDB's error shape (which a QStash client
 * reads too: it has `error`), so a client of either API sees what to change. The connection
 * closes: the parser cannot tell where the next request would start.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const code = err.code ?? '';
  // The client went away: nothing to say.
  if (code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
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
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
  );
}
