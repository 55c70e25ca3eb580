import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { logRequestWhenDebug } from '../../../../gateway/http/request-log.js';
import { forward } from '../../../../gateway/proxy/forward.js';
import { createMemoryLogger } from '../../../helpers/memory-logger.js';

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('logRequestWhenDebug', () => {
  it('when a forwarded request with a body ends, then its line is logged with the client address', async () => {
    const memory = createMemoryLogger('debug');
    const { logger } = memory;
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
        forwarded: { remoteAddress: '127.0.0.1', proto: 'http', host: undefined, fromTrustedProxy: false },
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

  it('when a queue publish names a destination with userinfo, a path and a query, then only its origin is logged', async () => {
    const memory = createMemoryLogger('debug');
    const server = http.createServer((req, res) => {
      logRequestWhenDebug(memory.logger, req, res);
      res.writeHead(201).end();
    });
    const port = await listen(server);
    const destination =
      'http://hookuser:USERINFO-SECRET@127.0.0.1:9/services/T0/B0/PATH-SECRET?token=QUERY-SECRET';
    try {
      const response = await fetch(`http://127.0.0.1:${port}/queue/ns/db/v2/publish/${destination}`, {
        method: 'POST',
        body: '{}',
      });
      expect(response.status).toBe(201);
      await memory.written;
      expect(memory.entries).toEqual([
        expect.objectContaining({ message: 'request', path: '/queue/ns/db/v2/publish/http://127.0.0.1:9' }),
      ]);
      expect(JSON.stringify(memory.entries)).not.toMatch(/SECRET|hookuser/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
