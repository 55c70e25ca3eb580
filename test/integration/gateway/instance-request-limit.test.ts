import http from 'node:http';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';

const LIMIT = 2;

/** SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS against an echo server whose /hold answers stay open. */
describe('the gateway limits the requests in flight per instance', () => {
  const namespace = useTestNamespace('gw-inflight');
  let echo: EchoUpstream;
  let gateway: Gateway;
  let base: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    echo = await startEchoUpstream();
    ({ gateway, base } = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'busy',
      port: echo.port,
      env: { SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS: String(LIMIT), SETTEE_GATEWAY_RETRY_AFTER: '3' },
    }));
  });

  afterAll(async () => {
    await gateway?.stop();
    await echo?.close();
  });

  /** A GET /hold whose response stays open: resolves once its head arrived, with a way to leave. */
  function hold(): Promise<{ status: number; leave(): void }> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${base}/hold`, { agent: false }, (res) =>
        resolve({ status: res.statusCode ?? 0, leave: () => req.destroy() }),
      );
      req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
    });
  }

  it('when an instance has the limit of requests in flight, then the next gets a CouchDB-shaped 429 with Retry-After and reaches no engine, and once one ends the next passes', async () => {
    const held = [await hold(), await hold()];
    expect(held.map((h) => h.status)).toEqual([200, 200]);
    const seenBefore = echo.received.length;
    const refused = await request(`${base}/over-the-limit`);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('3');
    expect(JSON.parse(refused.body)).toEqual({
      error: 'too_many_requests',
      reason: `the instance ${namespace.name}/busy already has ${LIMIT} requests in flight on this gateway; retry shortly`,
    });
    expect(echo.received.length).toBe(seenBefore);
    held[0]?.leave();
    let after = await request(`${base}/after`);
    for (let i = 0; i < 50 && after.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await request(`${base}/after`);
    }
    expect(after.status).toBe(200);
    held[1]?.leave();
  });
});
