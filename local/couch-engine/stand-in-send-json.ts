import type http from 'node:http';

/** A JSON answer with the headers CouchDB sends on its own JSON (no body for HEAD). */
export function sendJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  body: object,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'must-revalidate',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}
