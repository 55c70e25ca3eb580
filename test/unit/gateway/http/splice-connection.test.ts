import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { CLIENT_RESPONSE_LINE_NAMES, clientHeadEdits } from '../../../../gateway/proxy/forward-headers.js';
import {
  UpstreamError,
  UpstreamTimeoutError,
  ClientBodyTimeoutError,
} from '../../../../gateway/http/errors.js';
import type { RawRequestHead } from '../../../../gateway/http/raw-request-head.js';
import type { ResponseHead } from '../../../../gateway/http/response-head.js';
import { SpliceConnection } from '../../../../gateway/http/splice-connection.js';
import type { SpliceExchange, SpliceFailure } from '../../../../gateway/http/splice-exchange.js';
import { UpstreamSockets } from '../../../../gateway/http/upstream-sockets.js';

/**
 * The splice between a raw client on loopback and a node:http upstream on loopback, with a
 * decider that takes every head it is offered for the upstream (unless told not to), and a
 * node:http server behind it for the connections handed over.
 */

const REF = { namespace: 'ns', name: 'one' };

interface Log {
  started: number;
  ended: number;
  refused: number;
  failures: SpliceFailure[];
  counts: { bytesIn: number; bytesOut: number };
  /** Heads decided, by target. */
  decided: string[];
}

let upstream: http.Server;
let upstreamOrigin: string;
let upstreamRequests: Array<{ method: string; url: string; body: string; headers: http.IncomingHttpHeaders }>;
let fallback: http.Server;
/** Targets of the requests node:http (the full path) read. */
let fallbackRequests: string[];
let front: net.Server;
/** The front's side of each client connection, in order of arrival. */
let frontSockets: net.Socket[];
let frontPort: number;
let sockets: UpstreamSockets;
let log: Log;
/** Targets the decider leaves to the full path. */
let declined: Set<string>;
let origin: () => string;
let headersTimeoutMs: number;

function exchangeFor(head: RawRequestHead): SpliceExchange {
  const target = head.target;
  let upstreamHead = `${head.method} ${target} HTTP/1.1\r\n`;
  for (let i = 0; i < head.rawHeaders.length; i += 2) {
    const name = head.rawHeaders[i] as string;
    if (/^(connection|transfer-encoding)$/i.test(name)) continue;
    upstreamHead += `${name}: ${head.rawHeaders[i + 1]}\r\n`;
  }
  if (head.chunked) upstreamHead += 'Transfer-Encoding: chunked\r\n';
  return {
    origin: origin(),
    upstreamHead: `${upstreamHead}\r\n`,
    counts: log.counts,
    start: () => {
      log.started += 1;
    },
    responseLineNames: CLIENT_RESPONSE_LINE_NAMES,
    responseEdits: (buf: Buffer, response: ResponseHead) =>
      clientHeadEdits(
        buf,
        response,
        { locationForClient: (l) => l, setCookieForClient: (c) => c },
        'X-Spliced: 1\r\n',
      ),
    abandon: (refused) => {
      if (refused) log.refused += 1;
    },
    failed: (failure) => {
      log.failures.push(failure);
      if (failure === 'timeout') return new UpstreamTimeoutError(REF, headersTimeoutMs);
      if (failure === 'client-silent') return new ClientBodyTimeoutError(100);
      return new UpstreamError(REF, new Error('broken'));
    },
    end: () => {
      log.ended += 1;
    },
  };
}

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      upstreamRequests.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      const url = req.url ?? '/';
      if (url === '/chunked') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('hello ');
        setTimeout(() => res.end('world'), 5);
      } else if (url === '/no-content') {
        res.writeHead(204).end();
      } else if (url === '/not-modified') {
        res.writeHead(304, { ETag: '"1"' }).end();
      } else if (url === '/silent') {
        // answers nothing: the headers timeout
      } else if (url === '/break') {
        req.socket.destroy();
      } else {
        const text = `${req.method} ${url} ${body}`;
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
        res.end(req.method === 'HEAD' ? undefined : text);
      }
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  upstreamOrigin = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;

  fallback = http.createServer((req, res) => {
    fallbackRequests.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      const text = `full path ${req.method} ${req.url}`;
      res.writeHead(200, { 'Content-Length': Buffer.byteLength(text) }).end(text);
    });
  });

  front = net.createServer({ allowHalfOpen: true }, (socket) => {
    frontSockets.push(socket);
    new SpliceConnection(socket, {
      decide: (head) => {
        log.decided.push(head.target);
        return declined.has(head.target) ? undefined : exchangeFor(head);
      },
      handOver: (socket) => fallback.emit('connection', socket),
      sockets,
      maxHeadBytes: 16_384,
      idleTimeoutMs: 300,
      upstreamHeadersTimeoutMs: headersTimeoutMs,
      retryAfterSeconds: 1,
    });
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  frontPort = (front.address() as net.AddressInfo).port;
});

beforeEach(() => {
  frontSockets = [];
  fallbackRequests = [];
  upstreamRequests = [];
  log = { started: 0, ended: 0, refused: 0, failures: [], counts: { bytesIn: 0, bytesOut: 0 }, decided: [] };
  declined = new Set();
  origin = () => upstreamOrigin;
  headersTimeoutMs = 5_000;
  sockets = new UpstreamSockets({ maxConnectionsPerAddress: 8, idleTimeoutMs: 5_000 });
});

afterEach(() => sockets.close());

afterAll(async () => {
  await new Promise((resolve) => front.close(resolve));
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  fallback.closeAllConnections();
});

/** Sends `bytes` (a list: one write each, 10 ms apart) and reads until `done` says so or the connection closes. */
async function exchange(
  writes: string[],
  options: { done?: (text: string) => boolean; halfClose?: boolean } = {},
): Promise<{ text: string; closed: boolean }> {
  const socket = net.connect(frontPort, '127.0.0.1');
  socket.setNoDelay(true);
  await once(socket, 'connect');
  let text = '';
  let closed = false;
  const finished = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (options.done?.(text)) resolve();
    });
    socket.on('close', () => {
      closed = true;
      resolve();
    });
    socket.on('error', () => {});
  });
  for (const [i, bytes] of writes.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    socket.write(bytes, 'latin1');
  }
  if (options.halfClose) socket.end();
  await finished;
  socket.destroy();
  return { text, closed };
}

/** Whether `socket` closes within `ms`. */
async function closesWithin(socket: net.Socket, ms: number): Promise<boolean> {
  if (socket.destroyed) return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('SpliceConnection', () => {
  it('when requests follow each other on one connection, then each is answered through one pooled instance connection', async () => {
    const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: gw\r\n\r\n`;
    const { text } = await exchange([get('/a'), get('/b'), get('/c')], {
      done: (t) => t.includes('GET /c '),
    });
    expect(count(text, 'HTTP/1.1 200 OK')).toBe(3);
    expect(count(text, 'X-Spliced: 1')).toBe(3);
    expect(text).toMatch(/GET \/a [^]*GET \/b [^]*GET \/c /);
    expect(sockets.count(upstreamOrigin).open).toBe(1);
    expect(log).toMatchObject({ started: 3, ended: 3 });
  });

  it('when requests are pipelined in one write, then they are answered in order, each after the one before', async () => {
    const bytes =
      'POST /p1 HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\n\r\nfirstGET /p2 HTTP/1.1\r\nHost: gw\r\n\r\n' +
      'DELETE /p3 HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n';
    const { text, closed } = await exchange([bytes]);
    expect(closed).toBe(true);
    expect(text).toMatch(/POST \/p1 first[^]*GET \/p2 [^]*DELETE \/p3 /);
    expect(count(text, 'Connection: close')).toBe(1);
    expect(upstreamRequests.map((r) => r.url)).toEqual(['/p1', '/p2', '/p3']);
  });

  it('when both bodies are chunked, then they pass framed as they came and metering counts only the body bytes', async () => {
    const { text } = await exchange(
      [
        'POST /chunked HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
        '6\r\n world\r\n0\r\n\r\n',
      ],
      { done: (t) => t.endsWith('0\r\n\r\n') },
    );
    expect(upstreamRequests[0]?.body).toBe('hello world');
    expect(text).toContain('Transfer-Encoding: chunked');
    expect(text).toContain('6\r\nhello \r\n');
    expect(text).toContain('5\r\nworld\r\n');
    // 11 bytes each way: a count of the framing (sizes, CRLFs, the last chunk) would say 29 and 26.
    expect(log.counts).toEqual({ bytesIn: 11, bytesOut: 11 });
  });

  it('when a response has no body (HEAD, 204, 304), then the next request on the connection is still read', async () => {
    const { text } = await exchange(
      [
        'HEAD /h HTTP/1.1\r\nHost: gw\r\n\r\n' +
          'GET /no-content HTTP/1.1\r\nHost: gw\r\n\r\n' +
          'GET /not-modified HTTP/1.1\r\nHost: gw\r\n\r\n' +
          'GET /last HTTP/1.1\r\nHost: gw\r\n\r\n',
      ],
      { done: (t) => t.includes('GET /last ') },
    );
    expect(text).toMatch(/200 OK[^]*Content-Length: 8[^]*204 No Content[^]*304 Not Modified[^]*GET \/last /);
    expect(text).not.toContain('HEAD /h');
    expect(log).toMatchObject({ started: 4, ended: 4 });
  });

  it('when the client sends its FIN right after its request, then the whole response still reaches it', async () => {
    const { text, closed } = await exchange(['GET /chunked HTTP/1.1\r\nHost: gw\r\n\r\n'], {
      halfClose: true,
    });
    expect(closed).toBe(true);
    expect(text).toMatch(/hello [^]*world\r\n0\r\n\r\n$/);
    expect(log).toMatchObject({ started: 1, ended: 1 });
  });

  it('when a head is declined or not taken, then node:http answers it and the rest of the connection', async () => {
    declined.add('/full');
    const { text } = await exchange(
      [
        'GET /fast HTTP/1.1\r\nHost: gw\r\n\r\n',
        'GET /full HTTP/1.1\r\nHost: gw\r\n\r\nGET /fast-again HTTP/1.1\r\nHost: gw\r\n\r\n',
      ],
      { done: (t) => t.includes('full path GET /fast-again') },
    );
    expect(text).toMatch(/GET \/fast [^]*full path GET \/full[^]*full path GET \/fast-again/);
    expect(log.decided).toEqual(['/fast', '/full']);
    const expect100 = await exchange(
      ['PUT /e HTTP/1.1\r\nHost: gw\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok'],
      { done: (t) => t.includes('full path PUT /e') },
    );
    expect(expect100.text).toContain('full path PUT /e');
  });

  it('when the instance refuses the connection, then nothing started and node:http gets the request whole', async () => {
    const closed = net.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    origin = () => `http://127.0.0.1:${port}`;
    const { text } = await exchange(['POST /gone HTTP/1.1\r\nHost: gw\r\nContent-Length: 4\r\n\r\nbody'], {
      done: (t) => t.includes('full path POST /gone'),
    });
    expect(text).toContain('full path POST /gone');
    expect(log).toMatchObject({ refused: 1, started: 0, ended: 0 });
  });

  it('when the instance breaks off or stays silent before its head, then the client gets a 502 or a 504', async () => {
    const broken = await exchange(['GET /break HTTP/1.1\r\nHost: gw\r\n\r\n']);
    expect(broken.text).toMatch(/^HTTP\/1.1 502 Bad Gateway\r\n[^]*"error":"bad_gateway"/);
    headersTimeoutMs = 100;
    const silent = await exchange(['GET /silent HTTP/1.1\r\nHost: gw\r\n\r\n']);
    expect(silent.text).toMatch(/^HTTP\/1.1 504 Gateway Timeout\r\n[^]*"error":"gateway_timeout"/);
    expect(log.failures).toEqual(['broken', 'timeout']);
    expect(log).toMatchObject({ started: 2, ended: 2 });
  });

  it('when a request body stops arriving, then the client gets a 408 and the instance connection is dropped', async () => {
    const { text, closed } = await exchange([
      'PUT /slow HTTP/1.1\r\nHost: gw\r\nContent-Length: 10\r\n\r\nabc',
    ]);
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1.1 408 Request Timeout\r\n/);
    expect(log.failures).toEqual(['client-silent']);
    expect(log).toMatchObject({ started: 1, ended: 1 });
  });

  it('when a response or an error answer ends the connection and the client never closes its side, then the gateway closes it whole', async () => {
    for (const request of [
      'GET /a HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n',
      'GET /break HTTP/1.1\r\nHost: gw\r\n\r\n',
    ]) {
      frontSockets = [];
      const client = net.connect({ port: frontPort, host: '127.0.0.1', allowHalfOpen: true });
      client.on('error', () => {});
      client.resume();
      await once(client, 'connect');
      client.write(request, 'latin1');
      await once(client, 'end');
      // More than 3 idle timeouts: a socket only ended stays open for as long as the client likes.
      const closed = await closesWithin(frontSockets[0] as net.Socket, 1_000);
      client.destroy();
      expect(closed).toBe(true);
    }
  });

  it('when the instance does not accept the connection in time (a full backlog), then node:http gets the request whole', async () => {
    // A listener that never accepts, its backlog filled: the next connection's SYN goes unanswered.
    const blackhole = spawn('python3', [
      '-c',
      [
        'import socket, sys, time',
        's = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)',
        'fill = [socket.socket() for _ in range(4)]',
        'for c in fill: c.setblocking(False); c.connect_ex(s.getsockname())',
        'print(s.getsockname()[1], flush=True); sys.stdin.read()',
      ].join('\n'),
    ]);
    try {
      const [portLine] = (await once(blackhole.stdout, 'data')) as [Buffer];
      origin = () => `http://127.0.0.1:${portLine.toString().trim()}`;
      sockets = new UpstreamSockets({
        maxConnectionsPerAddress: 8,
        idleTimeoutMs: 5_000,
        connectTimeoutMs: 200,
      });
      const startedAt = Date.now();
      const answer = exchange(['POST /backlog HTTP/1.1\r\nHost: gw\r\nContent-Length: 4\r\n\r\nbody'], {
        done: (t) => t.includes('full path POST /backlog'),
      });
      const timer = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000));
      const { text } = (await Promise.race([answer, timer])) ?? { text: 'no answer in 3 s' };
      expect(text).toContain('full path POST /backlog');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(150);
      expect(log).toMatchObject({ refused: 0, started: 0, ended: 0 });
    } finally {
      blackhole.kill();
    }
  });

  it('when the client pipelines a head the fast path declines and then sends its FIN, then node:http reads that head', async () => {
    declined.add('/full');
    // Answered or not, as node:http answers a request followed by a FIN (it aborts one whose
    // answer is not ready by then): what the splice owes is to hand it over with the FIN behind it.
    const { text, closed } = await exchange(
      ['GET /a HTTP/1.1\r\nHost: gw\r\n\r\nGET /full HTTP/1.1\r\nHost: gw\r\n\r\n'],
      { halfClose: true },
    );
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1.1 200 OK[^]*GET \/a /);
    expect(log.decided).toEqual(['/a', '/full']);
    expect(fallbackRequests).toEqual(['/full']);
  });
});
