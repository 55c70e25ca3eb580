import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the echo upstream saw of one request. */
export interface EchoedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  bodyBytes: number;
}

export interface EchoUpstream {
  port: number;
  /** Every request received, in order. */
  received: EchoedRequest[];
  /** Requests whose exchange broke off before the response was finished (the gateway aborted them). */
  readonly aborted: number;
  close(): Promise<void>;
}

/**
 * A tiny HTTP server standing where an instance's CouchDB would, for the header-level checks a real
 * CouchDB cannot show: it answers each request with what it received, and a few paths answer with
 * response headers the gateway must strip or rewrite.
 */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const received: EchoedRequest[] = [];
  let aborted = 0;
  const server = http.createServer((req, res) => {
    res.once('close', () => {
      if (!res.writableFinished) aborted += 1;
    });
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      const seen: EchoedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        bodyBytes,
      };
      received.push(seen);
      const path = (req.url ?? '').split('?')[0];
      if (path === '/_up') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
      } else if (path === '/hold') {
        // A response that stays open until the client leaves, like a continuous _changes feed.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        const beat = setInterval(() => res.write('\n'), 100);
        res.once('close', () => clearInterval(beat));
      } else if (path === '/quiet') {
        // A continuous _changes feed with no heartbeat: the head at once, a change after `after` ms.
        const afterMs = Number(new URL(req.url ?? '', 'http://echo').searchParams.get('after'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        const timer = setTimeout(() => res.end('change\n'), afterMs);
        res.once('close', () => clearTimeout(timer));
      } else if (path?.endsWith('.html')) {
        // An HTML attachment whose instance sends a policy of its own, but no sandbox.
        res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Security-Policy': "default-src 'self'" });
        res.end('<script>fetch("/db/other/instance/")</script>');
      } else if (path === '/cookies') {
        res.writeHead(200, {
          'Set-Cookie': [
            'Y=2; Path=/_utils;Path=/x',
            'A=1; Path =/',
            'B=1; Path="/"',
            'X=1; Domain=.couch.test',
          ],
        });
        res.end('{"ok":true}');
      } else if (path === '/destroy') {
        req.socket.destroy();
      } else if (path === '/hop-by-hop') {
        res.writeHead(200, [
          'Connection',
          'keep-alive, X-Upstream-Private',
          'Keep-Alive',
          'timeout=5',
          'X-Upstream-Private',
          'secret-to-this-hop',
          'Proxy-Authenticate',
          'Basic',
          'X-End-To-End',
          'kept',
          'Content-Type',
          'text/plain',
        ]);
        res.end('ok');
      } else if (path === '/created') {
        // As CouchDB builds it: from X-Forwarded-Host, else from its own Host.
        res.writeHead(201, {
          Location: `http://${req.headers['x-forwarded-host'] ?? req.headers.host ?? ''}/db1/doc1`,
          'Set-Cookie': ['AuthSession=abc; Version=1; Path=/; HttpOnly', 'Other=x; Path=/sub'],
        });
        res.end('{"ok":true}');
      } else {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(seen));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    get aborted() {
      return aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
