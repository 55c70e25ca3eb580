import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpDeliverer, type Deliverer } from '../../../../gateway/queue/workers/http-delivery.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';
import { createGuardedAgents, type GuardedAgents } from '../../../../gateway/queue/workers/guarded-agents.js';
import { closeServer } from '../../../helpers/queue/test-receiver.js';

/** When /slow answers: far after the 200 ms timeout, so that a cut by it stands out on a loaded machine. */
const SLOW_ANSWER_MS = 5_000;

interface Seen {
  host: string;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The delivery client against scripted destinations on 127.0.0.1 and 127.0.0.2 (two origins, both loopback). */
describe('the delivery HTTP client', () => {
  let agents: GuardedAgents;
  let deliver: Deliverer;
  const servers: http.Server[] = [];
  const seen: Seen[] = [];
  let origin1: string;
  let origin2: string;

  const start = async (host: string): Promise<string> => {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', `http://${host}`);
        seen.push({
          host,
          method: req.method ?? '',
          path: url.pathname,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        const to = url.searchParams.get('to');
        const status = Number(url.searchParams.get('status') ?? '200');
        if (url.pathname === '/slow') return void setTimeout(() => res.end('late'), SLOW_ANSWER_MS).unref();
        if (url.pathname === '/big') return void res.end(Buffer.alloc(200 * 1_024, 120));
        if (url.pathname === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
        if (to) return void res.writeHead(status, { location: to }).end();
        res.writeHead(status, { 'retry-after': '5' }).end(`answer from ${host}`);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    origin1 = await start('127.0.0.1');
    origin2 = await start('127.0.0.2');
    agents = createGuardedAgents({ policy: compileAddressPolicy(['127.0.0.0/8']) });
    deliver = createHttpDeliverer({ agents, maxRedirects: 3 });
  });
  afterAll(async () => {
    agents.http.destroy();
    await Promise.all(servers.map(closeServer));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const post = (url: string, headers: Record<string, string> = {}, timeoutMs = 2_000) =>
    deliver({
      url,
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...headers },
      body: Buffer.from('payload'),
      timeoutMs,
    });

  it('when the destination answers with a failure, then status, Retry-After, the headers and the body start come back', async () => {
    const result = await post(`${origin1}/ok?status=503`);
    expect(result).toMatchObject({
      ok: false,
      status: 503,
      refused: false,
      retryAfter: '5',
      responseBody: 'answer from 127.0.0.1',
      responseHeaders: expect.objectContaining({ 'retry-after': ['5'] }) as unknown,
    });
    expect(result.responseHeaders?.['retry-after']).toEqual(['5']);
    expect(result.responseBodyBytes?.toString('utf8')).toBe('answer from 127.0.0.1');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      body: 'payload',
      headers: { 'content-type': 'text/plain', 'content-length': '7' },
    });
  });

  it('when more of the response is asked for (a callback reports it), then that much of the body is kept, and the dead-letter start stays short', async () => {
    const result = await deliver({
      url: `${origin1}/big`,
      method: 'POST',
      headers: {},
      body: Buffer.from('payload'),
      timeoutMs: 2_000,
      keepResponseBytes: 150 * 1_024,
    });
    expect(result.responseBodyBytes?.length).toBe(150 * 1_024);
    expect(result.responseBody).toHaveLength(1_024);
    expect((await post(`${origin1}/big`)).responseBodyBytes?.length).toBe(1_024);
  });

  it('when a 307 redirects, then method and body follow; on a 303, a GET without a body follows', async () => {
    expect((await post(`${origin1}/r?status=307&to=/final`)).ok).toBe(true);
    expect(seen.map((s) => [s.method, s.path, s.body])).toEqual([
      ['POST', '/r', 'payload'],
      ['POST', '/final', 'payload'],
    ]);
    seen.length = 0;
    expect((await post(`${origin1}/r?status=303&to=/final`)).ok).toBe(true);
    expect(seen[1]).toMatchObject({ method: 'GET', path: '/final', body: '' });
    expect(seen[1]?.headers['content-type']).toBeUndefined();
  });

  it('when a destination redirected its delivery, then its next delivery goes to it again (kept per destination, not where it led)', async () => {
    const destination = `${origin1}/r?status=307&to=${encodeURIComponent(`${origin2}/final`)}`;
    expect((await post(destination)).ok).toBe(true);
    expect((await post(destination)).ok).toBe(true);
    expect(seen.map((s) => [s.host, s.path])).toEqual([
      ['127.0.0.1', '/r'],
      ['127.0.0.2', '/final'],
      ['127.0.0.1', '/r'],
      ['127.0.0.2', '/final'],
    ]);
  });

  it('when a redirect goes to another origin, then Authorization and Cookie stay behind; within the origin they follow', async () => {
    await post(`${origin1}/r?status=302&to=${encodeURIComponent(`${origin2}/elsewhere`)}`, {
      authorization: 'Bearer tenant',
      cookie: 'a=1',
      'x-keep': 'yes',
    });
    expect(seen[1]).toMatchObject({ host: '127.0.0.2', headers: { 'x-keep': 'yes' } });
    expect(seen[1]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers.cookie).toBeUndefined();
    seen.length = 0;
    await post(`${origin1}/r?status=302&to=/same`, { authorization: 'Bearer tenant' });
    expect(seen[1]?.headers.authorization).toBe('Bearer tenant');
  });

  it('when redirects go on past the limit, then the attempt fails with the last status', async () => {
    const result = await post(`${origin1}/loop`);
    expect(result).toMatchObject({ ok: false, status: 302, error: 'more than 3 redirects' });
    expect(seen).toHaveLength(4);
  });

  it('when a redirect names a Location that is not a URL, then the attempt fails with its status and does not throw', async () => {
    const result = await post(`${origin1}/r?status=302&to=${encodeURIComponent('http://[')}`);
    expect(result).toEqual({
      ok: false,
      status: 302,
      refused: false,
      error: "the 302 redirect's Location is not a URL",
    });
    expect(seen).toHaveLength(1);
  });

  it('when the destination or a redirect holds credentials node:http cannot decode (u%ZZ), then the attempt fails as not a URL and does not throw', async () => {
    const port = new URL(origin1).port;
    await expect(post(`http://u%ZZ@127.0.0.1:${port}/ok`)).resolves.toEqual({
      ok: false,
      refused: false,
      error: 'the destination is not a URL',
    });
    expect(seen).toHaveLength(0);
    const to = encodeURIComponent(`http://u%ZZ@127.0.0.1:${port}/ok`);
    await expect(post(`${origin1}/r?status=307&to=${to}`)).resolves.toEqual({
      ok: false,
      status: 307,
      refused: false,
      error: "the 307 redirect's Location is not a URL",
    });
    expect(seen).toHaveLength(1);
  });

  it('when the answer takes longer than the timeout, then the attempt fails as a timeout', async () => {
    const started = Date.now();
    const result = await post(`${origin1}/slow`, {}, 200);
    expect(result).toMatchObject({ ok: false, refused: false, error: expect.stringMatching(/ETIMEDOUT/) });
    // Cut by the 200 ms timeout, long before the answer would have come.
    expect(Date.now() - started).toBeLessThan(SLOW_ANSWER_MS - 1_000);
  });

  it('when the answer is large, then only its start is kept and the status still counts', async () => {
    const result = await post(`${origin1}/big`);
    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(result.responseBody).toHaveLength(1_024);
  });

  it('when nothing listens, then the attempt fails with the connection error', async () => {
    const result = await post('http://127.0.0.1:1/');
    expect(result).toMatchObject({ ok: false, refused: false, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('when the destination drops a kept-alive connection as a request goes out on it, then the request is sent again on a new connection within the same attempt', async () => {
    // The race of Node's 5 s keep-alive: the server closes an idle connection just as the client
    // reuses it. Here every second request of a connection meets a closed connection.
    const connections = new Set<unknown>();
    let dropped = 0;
    const perSocket = new WeakMap<object, number>();
    const closing = http.createServer((req, res) => {
      connections.add(req.socket);
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) {
        dropped += 1;
        req.socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    servers.push(closing);
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closing.address() as AddressInfo).port}/`;
    expect(await post(url)).toMatchObject({ ok: true, status: 200 });
    expect(await post(url)).toMatchObject({ ok: true, status: 200 });
    expect([dropped, connections.size]).toEqual([1, 2]);
  });
});
