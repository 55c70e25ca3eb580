import { once } from 'node:events';
import http from 'node:http';
import type net from 'node:net';
import tls from 'node:tls';
import { createSpliceServer } from '../../../../gateway/http/splice-server.js';
import { UpstreamSockets } from '../../../../gateway/http/upstream-sockets.js';
import { generateControlPlanePki } from '../../../../local/pki.js';

describe('createSpliceServer with TLS', () => {
  it('when a client offers h2 and http/1.1 by ALPN, then http/1.1 is chosen, as the https server chooses it', async () => {
    const { apiserver } = await generateControlPlanePki();
    const fullPath = http.createServer((_req, res) => res.end('full path'));
    const sockets = new UpstreamSockets({ maxConnectionsPerAddress: 1, idleTimeoutMs: 1_000 });
    const front = createSpliceServer({
      fullPath,
      certificate: { cert: Buffer.from(apiserver.certPem), key: Buffer.from(apiserver.keyPem) },
      keepAliveInitialDelayMs: 1_000,
      splice: {
        decide: () => undefined,
        sockets,
        maxHeadBytes: 16_384,
        idleTimeoutMs: 1_000,
        upstreamHeadersTimeoutMs: 1_000,
        retryAfterSeconds: 1,
      },
    });
    front.server.listen(0, '127.0.0.1');
    await once(front.server, 'listening');
    const client = tls.connect({
      port: (front.server.address() as net.AddressInfo).port,
      host: '127.0.0.1',
      rejectUnauthorized: false,
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    try {
      await once(client, 'secureConnect');
      expect(client.alpnProtocol).toBe('http/1.1');
    } finally {
      client.destroy();
      front.closeAll();
      sockets.close();
      front.server.close();
    }
    // The key pairs are generated in JavaScript: seconds on a loaded machine.
  }, 60_000);
});
