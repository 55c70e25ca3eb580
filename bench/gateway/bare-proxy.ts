/**
 * The floor for the gateway's proxy overhead: the least a Node.js proxy on the gateway's stack can
 * do per request (a node:http server streaming through an undici Pool with the gateway's pool
 * settings, request headers passed on with X-Forwarded-For/Proto added, response headers passed
 * back). No routing, no activity, no header filtering: what the gateway adds over this is its own
 * cost. Run as its own process; argv[2] is its port, argv[3] the upstream's.
 */
import http from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, {
  connections: 256,
  headersTimeout: 0,
  bodyTimeout: 0,
});

/** A class, like the gateway's handler, so no closures are made per request. */
class PassThrough implements Dispatcher.DispatchHandlers {
  private resume: (() => void) | undefined;

  constructor(private readonly res: http.ServerResponse) {}

  onConnect(): void {}

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    this.resume = resume;
    const headers = new Array<string>(rawHeaders.length);
    for (let i = 0; i < rawHeaders.length; i++) headers[i] = (rawHeaders[i] as Buffer).toString('latin1');
    this.res.writeHead(statusCode, statusText, headers);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    this.res.once('drain', () => this.resume?.());
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(err: Error): void {
    this.res.destroy(err);
  }
}

const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const headers = req.rawHeaders.slice();
  headers.push('X-Forwarded-For', req.socket.remoteAddress ?? '', 'X-Forwarded-Proto', 'http');
  pool.dispatch(
    { path: req.url ?? '/', method: req.method as Dispatcher.HttpMethod, headers, body: null },
    new PassThrough(res),
  );
});
server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => process.exit(0));
