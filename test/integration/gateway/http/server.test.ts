import http from 'node:http';
import { startServer } from '../../../../gateway/http/server.js';
import { createSilentLogger } from '../../../../operator/observability/logger.js';

describe('the gateway listener shutdown', () => {
  it('when a keep-alive request finishes after close began, then close returns without waiting for the grace period', async () => {
    let release: () => void = () => undefined;
    const server = await startServer({
      listener: (_req, res) => {
        release = () => res.end('done');
      },
      host: '127.0.0.1',
      port: 0,
      tls: undefined,
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
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    const closed = server.close(30_000);
    release();
    expect(await response).toBe('done');
    await closed;
    // The client keeps its connection open; only the server's sweep of idle connections ends it.
    expect(Date.now() - started).toBeLessThan(5_000);
    agent.destroy();
  });
});
