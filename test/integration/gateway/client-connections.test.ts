import http from 'node:http';
import type { Gateway } from '../../../gateway/gateway.js';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { exchangeRaw, jsonBodyOf, RawConnection, statusOf } from '../../helpers/gateway/raw-connection.js';

const HEADERS_TIMEOUT_MS = 400;
const MAX_HEADER_BYTES = 4_096;
const IDLE_TIMEOUT_MS = 400;
/** Well past both timeouts and the sweep that enforces the headers timeout. */
const CUT_WITHIN_MS = 4_000;
/** How long a test waits for a connection the gateway should have cut but did not. */
const GIVE_UP_AFTER_MS = 6_000;

/**
 * Clients that keep the gateway waiting (slowloris) or leave early, against an echo server standing
 * where the instance's CouchDB would be, with short client timeouts configured.
 */
describe('the gateway and clients that are slow or leave early', () => {
  const namespace = useTestNamespace('gw-clients');
  let echo: EchoUpstream;
  let gateway: Gateway;
  let base: string;
  let basePath: string;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    echo = await startEchoUpstream();
    ({ gateway, basePath, base } = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'echo',
      port: echo.port,
      env: {
        SETTEE_GATEWAY_CLIENT_HEADERS_TIMEOUT: `${HEADERS_TIMEOUT_MS}ms`,
        SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT: `${IDLE_TIMEOUT_MS}ms`,
        SETTEE_GATEWAY_MAX_HEADER_BYTES: String(MAX_HEADER_BYTES),
      },
    }));
  });

  afterAll(async () => {
    await gateway?.stop();
    await echo?.close();
  });

  const errorCount = async (code: string): Promise<number> => {
    const metrics = (await request(`${gateway.url}/metrics`)).body;
    const line = metrics
      .split('\n')
      .find((text) => text.startsWith(`settee_gateway_errors_total{code="${code}"}`));
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  it('when a client connects and sends nothing, then the gateway closes the connection after the idle timeout', async () => {
    const connection = new RawConnection(gateway.port);
    const result = await connection.finish(GIVE_UP_AFTER_MS);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50);
    expect(result.elapsedMs).toBeLessThan(CUT_WITHIN_MS);
  });

  it('when a request head is larger than SETTEE_GATEWAY_MAX_HEADER_BYTES, then a CouchDB-shaped 431 answers it, on the instance and queue paths alike, no upstream sees it, and one just under passes', async () => {
    const head = (path: string, bytes: number) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(bytes)}\r\n\r\n`;
    for (const path of [`${basePath}/too-big`, '/queue/ns/binding/v2/messages']) {
      const result = await exchangeRaw(gateway.port, head(path, MAX_HEADER_BYTES));
      expect(statusOf(result.text)).toBe(431);
      expect(result.text).toMatch(/\r\nconnection: close\r\n/i);
      expect(jsonBodyOf(result.text)).toEqual({
        error: 'request_header_fields_too_large',
        reason: 'the request line and headers are larger than this gateway takes',
      });
    }
    expect(echo.received.some((seen) => seen.url === '/too-big')).toBe(false);
    const under = await request(`${base}/just-under`, {
      headers: { 'X-Big': 'a'.repeat(MAX_HEADER_BYTES / 2) },
    });
    expect(under.status).toBe(200);
  });

  it('when a client sends its headers one line at a time, each sooner than the idle timeout, then the headers timeout closes the connection', async () => {
    const connection = new RawConnection(gateway.port);
    connection.write(`GET ${basePath}/slow-headers HTTP/1.1\r\nHost: x\r\n`);
    const dribble = setInterval(() => connection.write('X-A: b\r\n'), IDLE_TIMEOUT_MS / 4);
    try {
      const result = await connection.finish(GIVE_UP_AFTER_MS);
      expect(result.closedByServer).toBe(true);
      expect(result.elapsedMs).toBeLessThan(CUT_WITHIN_MS);
      if (result.text !== '') expect(statusOf(result.text)).toBe(408);
    } finally {
      clearInterval(dribble);
    }
    expect(echo.received.some((seen) => seen.url === '/slow-headers')).toBe(false);
  });

  it('when a request body stops arriving, then the client gets a CouchDB-shaped 408, the connection closes and the upstream request ends', async () => {
    const abortedBefore = echo.aborted;
    const connection = new RawConnection(gateway.port);
    connection.write(
      `PUT ${basePath}/db/slow-upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":`,
    );
    const result = await connection.finish(GIVE_UP_AFTER_MS);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeLessThan(CUT_WITHIN_MS);
    expect(statusOf(result.text)).toBe(408);
    expect(jsonBodyOf(result.text)).toEqual({
      error: 'request_timeout',
      reason: `the request body stopped arriving for ${IDLE_TIMEOUT_MS} ms`,
    });
    await waitFor(
      'the upstream request to end',
      async () => (echo.aborted > abortedBefore ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
  });

  it('when a continuous feed stays quiet for longer than every client timeout, then it is not cut and its change arrives', async () => {
    const quietMs = 4 * Math.max(HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS);
    const started = Date.now();
    const response = await request(`${base}/quiet?after=${quietMs}`);
    expect(response.status).toBe(200);
    expect(response.body).toBe('change\n');
    expect(Date.now() - started).toBeGreaterThanOrEqual(quietMs - 50);
  });

  it('when a client goes away in the middle of a download or an upload, then it is no upstream failure', async () => {
    const failedBefore = await errorCount('UPSTREAM_FAILED');
    const abortedBefore = echo.aborted;
    await new Promise<void>((resolve, reject) => {
      const download = http.get(`${base}/hold`, { agent: false }, (res) => {
        res.once('data', () => {
          download.destroy();
          resolve();
        });
      });
      download.on('error', (err) => (download.destroyed ? undefined : reject(err)));
    });
    await new Promise<void>((resolve, reject) => {
      const upload = http.request(`${base}/upload`, {
        method: 'PUT',
        agent: false,
        headers: { 'Content-Length': String(10_000_000) },
      });
      upload.on('error', () => undefined);
      upload.write(Buffer.alloc(500_000, 'a'), (err) => {
        if (err) reject(err);
        else
          setTimeout(() => {
            upload.destroy();
            resolve();
          }, 50);
      });
    });
    await waitFor(
      'both upstream requests to end',
      async () => (echo.aborted >= abortedBefore + 2 ? true : undefined),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
      },
    );
    expect(await errorCount('UPSTREAM_FAILED')).toBe(failedBefore);
  });
});
