import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { startGatewayInFrontOf } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';

const HEADERS_TIMEOUT_MS = 400;

/**
 * A hung CouchDB: a plain node:http server standing where the instance's CouchDB would be, which
 * accepts every connection and reads every request but never answers /hang, and on /quiet sends
 * its response head at once and its body only after longer than the headers timeout (a continuous
 * _changes feed between changes).
 */
async function startSilentUpstream(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/quiet') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.flushHeaders();
      const timer = setTimeout(() => res.end('change\n'), HEADERS_TIMEOUT_MS * 2);
      res.once('close', () => clearTimeout(timer));
    }
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the gateway in front of an instance that accepts requests and never answers', () => {
  const namespace = useTestNamespace('gw-hung');
  let upstream: Awaited<ReturnType<typeof startSilentUpstream>>;
  let gateway: Gateway;
  let base: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    upstream = await startSilentUpstream();
    ({ gateway, base } = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'hung',
      port: upstream.port,
      env: { SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT: `${HEADERS_TIMEOUT_MS}ms` },
    }));
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it('when the response head does not come within the upstream headers timeout, then the client gets a CouchDB-shaped 504, counted as an error', async () => {
    const started = Date.now();
    const response = await request(`${base}/hang`);
    const elapsedMs = Date.now() - started;
    expect(response.status).toBe(504);
    expect(JSON.parse(response.body)).toEqual({
      error: 'gateway_timeout',
      reason: `the instance ${namespace.name}/hung did not start its response within ${HEADERS_TIMEOUT_MS} ms`,
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 3_000);
    const metrics = await request(`${gateway.url}/metrics`);
    expect(metrics.body).toContain('settee_gateway_errors_total{code="UPSTREAM_TIMEOUT"} 1');
  });

  it('when the head came and the body is silent for longer than that timeout, then the response is not cut', async () => {
    const response = await request(`${base}/quiet`);
    expect(response.status).toBe(200);
    expect(response.body).toBe('change\n');
  });
});
