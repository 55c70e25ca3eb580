import http from 'node:http';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  startEchoUpstream,
  type EchoUpstream,
  type EchoedRequest,
} from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf } from '../../helpers/gateway/gateway-harness.js';
import { request, type PlainResponse } from '../../helpers/gateway/http-request.js';
import { exchangeRaw, jsonBodyOf, statusOf } from '../../helpers/gateway/raw-connection.js';

const DOMAIN = 'couch.settee.test';

/**
 * Request heads that HTTP allows but clients seldom send (absolute-form targets, HTTP/1.0 without
 * Host, CONNECT) or that HTTP forbids (two Host headers), written byte for byte on raw connections,
 * against an echo server standing where the instance's CouchDB would be.
 */
describe('the gateway and unusual request heads', () => {
  const namespace = useTestNamespace('gw-targets');
  let echo: EchoUpstream;
  let gateway: Gateway;
  let basePath: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    echo = await startEchoUpstream();
    ({ gateway, basePath } = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'echo',
      port: echo.port,
      env: { SETTEE_GATEWAY_DOMAIN: DOMAIN },
    }));
  });

  afterAll(async () => {
    await gateway?.stop();
    await echo?.close();
  });

  /** A request whose target is written exactly as given (node:http sends `path` as it is). */
  const requestTarget = (target: string, host: string): Promise<PlainResponse> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: gateway.port, path: target, headers: { Host: host }, agent: false },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('when a request carries two Host headers, then it is refused with a CouchDB-shaped 400 and never forwarded', async () => {
    const before = echo.received.length;
    const { text } = await exchangeRaw(
      gateway.port,
      `GET ${basePath}/two-hosts HTTP/1.1\r\nHost: a.x\r\nHost: b.y\r\nConnection: close\r\n\r\n`,
    );
    expect(statusOf(text)).toBe(400);
    expect(jsonBodyOf(text)).toEqual({
      error: 'bad_request',
      reason: 'the Host header "a.x, b.y" is sent more than once',
    });
    expect(echo.received.length).toBe(before);
  });

  it('when the target is in absolute form, then its path goes to the instance and its authority counts as the Host', async () => {
    const authority = new URL(gateway.url).host;
    const pathForm = await requestTarget(`http://${authority}${basePath}/absolute?x=1`, 'ignored.example');
    expect(pathForm.status).toBe(200);
    const seen = JSON.parse(pathForm.body) as EchoedRequest;
    expect(seen.url).toBe('/absolute?x=1');
    expect(seen.headers['x-forwarded-host']).toBe(authority);
    expect(seen.headers.host).toBe(authority);

    const hostForm = await requestTarget(
      `http://echo.${namespace.name}.${DOMAIN}/db1/doc`,
      'ignored.example',
    );
    expect(hostForm.status).toBe(200);
    expect((JSON.parse(hostForm.body) as EchoedRequest).url).toBe('/db1/doc');
  });

  it('when an HTTP/1.0 client sends no Host and the instance answers 201 with a Location, then the client gets the 201 and a path under the prefix', async () => {
    const { text } = await exchangeRaw(
      gateway.port,
      `PUT ${basePath}/created HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(statusOf(text)).toBe(201);
    expect(text).toContain(`\r\nLocation: ${basePath}/db1/doc1\r\n`);
  });

  it('when a malformed path or an unknown route is very long, then the answer repeats only the start of it', async () => {
    const malformed = await request(`${gateway.url}/db/${'x'.repeat(15_000)}/a/`);
    expect(malformed.status).toBe(400);
    expect((JSON.parse(malformed.body) as { reason: string }).reason.length).toBeLessThan(300);
    const unknown = await request(`${gateway.url}/nowhere/${'y'.repeat(10_000)}`);
    expect(unknown.status).toBe(404);
    expect((JSON.parse(unknown.body) as { reason: string }).reason.length).toBeLessThan(300);
  });

  it('when a client sends CONNECT, then it gets a CouchDB-shaped 405 before the connection closes', async () => {
    const result = await exchangeRaw(
      gateway.port,
      `CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`,
    );
    expect(result.closedByServer).toBe(true);
    expect(statusOf(result.text)).toBe(405);
    expect(jsonBodyOf(result.text)).toEqual({
      error: 'method_not_allowed',
      reason: 'the gateway does not serve CONNECT requests',
    });
  });
});
