import http from 'node:http';
import type { Duplex } from 'node:stream';
import { MethodNotAllowedError } from './errors.js';
import { buildErrorResponse } from './error-response.js';

/**
 * The server's 'connect' listener. Node hands a CONNECT request its raw socket and, without a
 * listener, drops the connection with no status line at all; the gateway tunnels nothing, so the
 * client gets a CouchDB-shaped 405 instead. Its `Allow` is empty: the target of a CONNECT is an
 * authority (host:port), and no method is served there (RFC 9110 section 10.2.1 lets an empty
 * Allow say so).
 */
export function refuseConnect(req: http.IncomingMessage, socket: Duplex): void {
  const { status, headers, body } = buildErrorResponse(new MethodNotAllowedError(req.method ?? 'CONNECT'), {
    retryAfterSeconds: 0,
  });
  const text = `${JSON.stringify(body)}\n`;
  const fields = { ...headers, Allow: '', 'Content-Length': Buffer.byteLength(text), Connection: 'close' };
  const head = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  // The socket left the HTTP server's care with the CONNECT: its errors and its end are ours now.
  socket.on('error', () => socket.destroy());
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head.join('')}\r\n${text}`, () =>
    socket.destroy(),
  );
}
