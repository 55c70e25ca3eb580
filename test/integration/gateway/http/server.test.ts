import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { loadGatewayConfig } from '../../../../gateway/config.js';
import { startServer } from '../../../../gateway/http/server.js';
import { createSilentLogger } from '../../../../observability/logger.js';

describe('the gateway listener shutdown', () => {
  it('when a keep-alive request finishes after close began, then close returns without waiting for the grace period', async () => {
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const server = await startServer({
      listener: (_req, res) => {
        release = () => res.end('done');
        arrived();
      },
      host: '127.0.0.1',
      port: 0,
      tls: undefined,
      clients: loadGatewayConfig({}).clients,
      logger: createSilentLogger(),
    });
    const agent = new http.Agent({ keepAlive: true });
    const response = new Promise<string>((resolve, reject) => {
      http
        .get(`${server.url}/slow`, { agent }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });
    // Close begins while the request is in flight, however long a loaded machine takes to deliver it.
    await requestArrived;
    const started = Date.now();
    const closed = server.close(30_000);
    release();
    expect(await response).toBe('done');
    await closed;
    // The client keeps its connection open; only the server's sweep of idle connections ends it.
    expect(Date.now() - started).toBeLessThan(5_000);
    agent.destroy();
  });

  it('when a client connects and stays quiet, then the kernel keeps a TCP keepalive timer of about a minute on its connection', async () => {
    const server = await startServer({
      listener: (_req, res) => res.end('ok'),
      host: '127.0.0.1',
      port: 0,
      tls: undefined,
      clients: loadGatewayConfig({}).clients,
      logger: createSilentLogger(),
    });
    const client = net.connect(server.port, '127.0.0.1');
    try {
      await new Promise((resolve, reject) => client.once('connect', resolve).once('error', reject));
      const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
      // /proc/net/tcp (Linux): the server's end of this connection, with its timer kind and
      // expiry; kind 2 on an idle established socket is the keepalive timer, in 1/100 s.
      const ends = (await fs.readFile('/proc/net/tcp', 'utf8'))
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter(
          ([, local, remote]) =>
            local?.endsWith(`:${hex(server.port)}`) && remote?.endsWith(`:${hex(client.localPort ?? 0)}`),
        );
      expect(ends).toHaveLength(1);
      const [kind, expiry] = (ends[0]?.[5] ?? '').split(':');
      expect(kind).toBe('02');
      const seconds = parseInt(expiry ?? '0', 16) / 100;
      expect(seconds).toBeGreaterThan(50);
      expect(seconds).toBeLessThanOrEqual(60);
    } finally {
      client.destroy();
      await server.close(1_000);
    }
  });
});
