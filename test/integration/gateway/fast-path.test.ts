import fs from 'node:fs/promises';
import http from 'node:http';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { generateControlPlanePki } from '../../../local/pki.js';
import { waitFor } from '../../../local/wait.js';
import type { AddressInfo } from 'node:net';
import type { Gateway } from '../../../gateway/gateway.js';
import type { ActivityRenewal } from '../../../gateway/proxy/activity-lease.js';
import {
  createCouchInstance,
  replaceCouchInstanceStatus,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { RawConnection, statusOf } from '../../helpers/gateway/raw-connection.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/**
 * SETTEE_GATEWAY_FAST_PATH=true through the real gateway (docs/data-path.md, Option A): the plain
 * requests of an awake instance are spliced, and everything the full path does for them is done
 * alike. A gateway with the flag off, over the same instances, is the reference.
 */

/** A stand-in engine whose paths answer with what the gateway must frame, rewrite or keep open. */
async function startEngine(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/_changes') {
        // A continuous feed: a heartbeat now and then, never an end.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('\n');
        const beat = setInterval(() => res.write('\n'), 100);
        res.on('close', () => clearInterval(beat));
        return;
      }
      if (path === '/chunked') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write(`got ${body.length}:`);
        setTimeout(() => res.end(body.toUpperCase()), 5);
        return;
      }
      if (path === '/empty') return void res.writeHead(204).end();
      if (path === '/same') return void res.writeHead(304, { ETag: '"1"' }).end();
      if (path === '/db' && req.method === 'PUT') {
        res.writeHead(201, {
          Location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/db`,
          'Set-Cookie': 'AuthSession=abc; Version=1; Path=/; HttpOnly',
          'Content-Type': 'application/json',
        });
        return void res.end('{"ok":true}\n');
      }
      const text = JSON.stringify({
        method: req.method,
        url: req.url,
        body,
        xff: req.headers['x-forwarded-for'],
        proto: req.headers['x-forwarded-proto'],
      });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** One sample of a Prometheus exposition, by name and the label pairs it must carry. */
function sampleOf(metrics: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = metrics
    .split('\n')
    .find(
      (l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && wanted.every((p) => l.includes(p)),
    );
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const scrape = async (gateway: Gateway): Promise<string> => (await request(`${gateway.url}/metrics`)).body;
const spliced = async (gateway: Gateway): Promise<number> =>
  sampleOf(await scrape(gateway), 'settee_gateway_spliced_requests_total');

describe('the gateway with its fast path on', () => {
  const namespace = useTestNamespace('gw-fast');
  const { kubeConfig } = testControlPlane();
  const renewals: ActivityRenewal[] = [];
  let engine: Awaited<ReturnType<typeof startEngine>>;
  let fast: Gateway;
  let full: Gateway;
  const base = (gateway: Gateway, name = 'awake'): string => `${gateway.url}/db/${namespace.name}/${name}`;

  beforeAll(async () => {
    engine = await startEngine();
    for (const name of ['awake', 'metered-fast', 'metered-full']) {
      await createCouchInstance(kubeConfig, { namespace: namespace.name, name }, { plan: 'paid' });
      await setInstancePod(
        kubeConfig,
        { namespace: namespace.name, name },
        { port: engine.port, ready: true },
      );
    }
    // Free, with one read a second: the envelope's refusal must still be the full path's.
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name: 'limited' });
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'limited' },
      { port: engine.port, ready: true },
    );
    const env = {
      SETTEE_GATEWAY_ACTIVITY_INTERVAL: '200ms',
      SETTEE_GATEWAY_FREE_READS_PER_SECOND: '1',
    };
    const recordLease = async (renewal: ActivityRenewal): Promise<void> => {
      renewals.push(renewal);
    };
    fast = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { ...env, SETTEE_GATEWAY_FAST_PATH: 'true' },
      writers: { activityLease: recordLease, wakeRequest: async () => undefined },
    });
    full = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: { ...env, SETTEE_GATEWAY_FAST_PATH: 'false' },
      writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
    });
  });

  afterAll(async () => {
    await fast?.stop();
    await full?.stop();
    await engine?.close();
  });

  it('when plain requests come kept alive and pipelined, then each is spliced and answered in order', async () => {
    const before = await spliced(fast);
    const connection = new RawConnection(fast.port);
    const path = `/db/${namespace.name}/awake`;
    connection.write(`GET ${path}/doc-1 HTTP/1.1\r\nHost: gw\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    connection.write(
      `PUT ${path}/doc-2 HTTP/1.1\r\nHost: gw\r\nContent-Length: 7\r\n\r\n{"n":2}` +
        `GET ${path}/doc-3 HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`,
    );
    const { text, closedByServer } = await connection.finish(5_000);
    expect(closedByServer).toBe(true);
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(text).toMatch(/"url":"\/doc-1"[^]*"url":"\/doc-2","body":"\{\\"n\\":2\}"[^]*"url":"\/doc-3"/);
    expect((await spliced(fast)) - before).toBe(3);
  });

  it('when bodies are chunked both ways, or a response has none (HEAD, 204, 304), then the client reads each whole', async () => {
    const before = await spliced(fast);
    const chunked = await request(`${base(fast)}/chunked`, {
      method: 'POST',
      body: 'abc',
      headers: { 'Transfer-Encoding': 'chunked' },
    });
    expect(chunked).toMatchObject({ status: 200, body: 'got 3:ABC' });
    expect(chunked.headers['transfer-encoding']).toBe('chunked');
    const head = await request(`${base(fast)}/doc`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect((await request(`${base(fast)}/empty`)).status).toBe(204);
    expect((await request(`${base(fast)}/same`)).status).toBe(304);
    expect((await spliced(fast)) - before).toBe(4);
  });

  it('when the instance answers with its own Location and Set-Cookie, then the client gets what the full path gives', async () => {
    const answers = await Promise.all(
      [fast, full].map((gateway) =>
        request(`${base(gateway)}/db`, { method: 'PUT', headers: { Host: 'couch.example' } }),
      ),
    );
    const [viaFast, viaFull] = answers.map((answer) => ({
      status: answer.status,
      location: answer.headers.location,
      cookie: answer.headers['set-cookie'],
      csp: answer.headers['content-security-policy'],
      nosniff: answer.headers['x-content-type-options'],
      body: answer.body,
    }));
    expect(viaFast).toEqual(viaFull);
    expect(viaFast).toMatchObject({
      status: 201,
      location: `http://couch.example/db/${namespace.name}/awake/db`,
      cookie: [`AuthSession=abc; Version=1; Path=/db/${namespace.name}/awake; HttpOnly`],
      nosniff: 'nosniff',
    });
    expect(viaFast?.csp).toContain('sandbox');
  });

  it('when the same requests go through either path, then the meters count the same requests and body bytes', async () => {
    const send = async (gateway: Gateway, name: string): Promise<void> => {
      for (let i = 0; i < 3; i++) await request(`${base(gateway, name)}/db/doc-${i}`);
      await request(`${base(gateway, name)}/db/doc`, { method: 'PUT', body: '{"n":12345}' });
      await request(`${base(gateway, name)}/chunked`, {
        method: 'POST',
        body: 'chunked body',
        headers: { 'Transfer-Encoding': 'chunked' },
      });
      await request(`${base(gateway, name)}/db/_find`, { method: 'POST', body: '{"selector":{}}' });
    };
    const before = await spliced(fast);
    await send(fast, 'metered-fast');
    await send(full, 'metered-full');
    expect((await spliced(fast)) - before).toBe(6);
    expect(await spliced(full)).toBe(0);
    const counted = async (gateway: Gateway, name: string): Promise<number[]> => {
      const metrics = await scrape(gateway);
      const labels = { namespace: namespace.name, instance: name };
      return [
        ...['read', 'write', 'query'].map((c) =>
          sampleOf(metrics, 'settee_gateway_instance_requests_total', { ...labels, class: c }),
        ),
        ...['in', 'out'].map((d) =>
          sampleOf(metrics, 'settee_gateway_instance_body_bytes_total', { ...labels, direction: d }),
        ),
      ];
    };
    const viaFull = await counted(full, 'metered-full');
    // The engine's answers are the same for both (they echo the instance's own path, not the prefix).
    expect(await counted(fast, 'metered-fast')).toEqual(viaFull);
    // 3 reads, 2 writes (the PUT and the chunked POST), 1 query; 11 + 12 + 15 bytes in.
    expect(viaFull.slice(0, 4)).toEqual([3, 2, 1, 38]);
  });

  it('when a continuous _changes stays open on the fast path, then the instance stays counted active until it closes', async () => {
    const before = await spliced(fast);
    const key = `${namespace.name}/awake`;
    const renewalsOf = (): number =>
      renewals.filter((r) => `${r.instance.namespace}/${r.instance.name}` === key).length;
    const feed = http.get(`${base(fast)}/_changes?feed=continuous`);
    const [response] = (await once(feed, 'response')) as [http.IncomingMessage];
    response.resume();
    const start = renewalsOf();
    // Renewed about every 200 ms while the feed is open, with no request coming (waited for rather
    // than counted in a fixed window: a loaded machine delays timers).
    await waitFor(
      'three renewals while the feed is open',
      async () => (renewalsOf() - start >= 3 ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    feed.destroy();
    // Then they stop: a whole second with none comes (a renewal already on its way at the close may
    // still land); a feed still counted open keeps renewing every 200 ms, and this times out.
    await waitFor(
      'a second with no renewal after the close',
      async () => {
        const seen = renewalsOf();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return renewalsOf() === seen ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 0 },
    );
    expect((await spliced(fast)) - before).toBe(1);
  });

  it('when an instance is not awake, then its request takes the full path and is held until it is', async () => {
    const ref = { namespace: namespace.name, name: 'sleeping' };
    await createCouchInstance(kubeConfig, ref, { plan: 'paid' });
    await replaceCouchInstanceStatus(kubeConfig, ref, {
      phase: 'Hibernated',
      hibernatedAt: new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
    const before = await spliced(fast);
    const answer = request(`${base(fast, 'sleeping')}/doc`, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    const woken = await answer;
    expect(woken.status).toBe(200);
    expect(woken.headers['x-settee-cold-start']).toBeDefined();
    expect((await spliced(fast)) - before).toBe(0);
  });

  it('when a free instance goes over its rate, then the fast path leaves the refusal to the full path: 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let retryAfter: string | undefined;
    for (let i = 0; i < 4; i++) {
      const answer = await request(`${base(fast, 'limited')}/doc-${i}`);
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers['retry-after'] as string;
    }
    expect(statuses).toContain(200);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('when a raw head is one the fast path does not take, then node:http answers it on the same connection', async () => {
    const connection = new RawConnection(fast.port);
    connection.write(`GET /healthz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`);
    const { text } = await connection.finish(3_000);
    expect(statusOf(text)).toBe(200);
  });

  it('when the gateway serves TLS itself, then requests are spliced after the handshake and the instance is told https', async () => {
    const pair = (await generateControlPlanePki()).apiserver;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-fast-tls-'));
    const files = { certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key') };
    await fs.writeFile(files.certFile, pair.certPem);
    await fs.writeFile(files.keyFile, pair.keyPem);
    const secure = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: {
        SETTEE_GATEWAY_FAST_PATH: 'true',
        SETTEE_GATEWAY_TLS_CERT: files.certFile,
        SETTEE_GATEWAY_TLS_KEY: files.keyFile,
      },
      writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
    });
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: secure.port, rejectUnauthorized: false }, () =>
          socket.write(
            `GET /db/${namespace.name}/awake/one HTTP/1.1\r\nHost: gw\r\n\r\n` +
              `GET /db/${namespace.name}/awake/two HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n`,
          ),
        );
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('end', () => resolve(received));
        socket.on('error', reject);
      });
      expect(text).toMatch(/"url":"\/one"[^]*"proto":"https"[^]*"url":"\/two"[^]*"proto":"https"/);
      const metrics = (await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: secure.port, rejectUnauthorized: false }, () =>
          socket.write('GET /metrics HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n'),
        );
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('end', () => resolve(received));
        socket.on('error', reject);
      })) as string;
      expect(metrics).toContain('settee_gateway_spliced_requests_total 2');
    } finally {
      await secure.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
