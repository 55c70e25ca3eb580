import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import winston from 'winston';
import Transport from 'winston-transport';
import { logRequestWhenDebug } from '../../../../gateway/http/request-log.js';
import { forward } from '../../../../gateway/proxy/forward.js';

/** Keeps what the logger writes, to read it back. */
class MemoryTransport extends Transport {
  readonly entries: Array<Record<string, unknown>> = [];
  private wrote: () => void = () => undefined;
  readonly written = new Promise<void>((resolve) => (this.wrote = resolve));
  override log(info: Record<string, unknown>, next: () => void): void {
    this.entries.push(info);
    this.wrote();
    next();
  }
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('logRequestWhenDebug', () => {
  it('when a forwarded request with a body ends, then its line is logged with the client address', async () => {
    const memory = new MemoryTransport();
    const logger = winston.createLogger({ level: 'debug', transports: [memory] });
    const agent = new Agent();
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{"ok":true}'));
    });
    const upstreamPort = await listen(upstream);
    // undici nulls req.socket when it is done with a request body; the line is written after
    // that, on 'close' (reading the address then crashed the gateway once).
    const gateway = http.createServer((req, res) => {
      logRequestWhenDebug(logger, req, res);
      forward(agent, {
        req,
        res,
        origin: `http://127.0.0.1:${upstreamPort}`,
        upstreamPath: '/db/doc',
        basePath: '',
        proto: 'http',
        errors: { onUpstreamError: (err) => res.destroy(err) },
      });
    });
    const gatewayPort = await listen(gateway);
    try {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        http
          .request(
            {
              host: '127.0.0.1',
              port: gatewayPort,
              method: 'PUT',
              path: '/db/doc?token=secret',
              agent: false,
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode));
            },
          )
          .on('error', reject)
          .end('{"a":1}');
      });
      expect(status).toBe(200);
      await memory.written;
      expect(memory.entries).toEqual([
        expect.objectContaining({
          message: 'request',
          method: 'PUT',
          path: '/db/doc',
          status: 200,
          completed: true,
          remoteAddress: '127.0.0.1',
        }),
      ]);
    } finally {
      await agent.close();
      await new Promise((resolve) => gateway.close(resolve));
      await new Promise((resolve) => upstream.close(resolve));
    }
  });
});
