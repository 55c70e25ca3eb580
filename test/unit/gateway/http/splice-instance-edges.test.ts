import { createHash } from 'node:crypto';
import net from 'node:net';
import { once } from 'node:events';
import { UpstreamError } from '../../../../gateway/http/errors.js';
import type { RawRequestHead } from '../../../../gateway/http/raw-request-head.js';
import { SpliceConnection } from '../../../../gateway/http/splice-connection.js';
import type { SpliceExchange } from '../../../../gateway/http/splice-exchange.js';
import { UpstreamSockets } from '../../../../gateway/http/upstream-sockets.js';
import { CLIENT_RESPONSE_LINE_NAMES, clientHeadEdits } from '../../../../gateway/proxy/forward-headers.js';

/**
 * The splice against an instance written raw on loopback, which misbehaves as a test tells it to:
 * writes past its response's end, reads a large upload late, answers before a body is read. Each
 * case pins a behaviour of splice-connection.ts that no other test did (the review's finding 7).
 */

const REF = { namespace: 'ns', name: 'one' };

/** The instance's side of each connection, in order of arrival; `serve` is told of each. */
let instanceSockets: net.Socket[];
let serve: (socket: net.Socket) => void;
let instance: net.Server;
let origin: string;
let front: net.Server;
let frontSockets: net.Socket[];
let frontPort: number;
let sockets: UpstreamSockets;
let log: { started: number; ended: number; failures: string[] };
/** The splice's timeouts for the connections a test makes. */
let timeouts: { idleTimeoutMs: number; upstreamHeadersTimeoutMs: number };

function exchangeFor(head: RawRequestHead): SpliceExchange {
  let upstreamHead = `${head.method} ${head.target} HTTP/1.1\r\n`;
  for (let i = 0; i < head.rawHeaders.length; i += 2) {
    const name = head.rawHeaders[i] as string;
    if (!/^(connection|transfer-encoding)$/i.test(name))
      upstreamHead += `${name}: ${head.rawHeaders[i + 1]}\r\n`;
  }
  return {
    origin,
    upstreamHead: `${upstreamHead}\r\n`,
    counts: undefined,
    start: () => void (log.started += 1),
    responseLineNames: CLIENT_RESPONSE_LINE_NAMES,
    responseEdits: (buf, response) =>
      clientHeadEdits(buf, response, { locationForClient: (l) => l, setCookieForClient: (c) => c }, ''),
    abandon: () => undefined,
    failed: (failure) => {
      log.failures.push(failure);
      return new UpstreamError(REF, new Error(failure));
    },
    end: () => void (log.ended += 1),
  };
}

beforeAll(async () => {
  instance = net.createServer((socket) => {
    instanceSockets.push(socket);
    socket.on('error', () => undefined);
    serve(socket);
  });
  instance.listen(0, '127.0.0.1');
  await once(instance, 'listening');
  origin = `http://127.0.0.1:${(instance.address() as net.AddressInfo).port}`;
  front = net.createServer({ allowHalfOpen: true }, (socket) => {
    frontSockets.push(socket);
    new SpliceConnection(socket, {
      decide: exchangeFor,
      handOver: (handed) => handed.destroy(),
      sockets,
      maxHeadBytes: 16_384,
      ...timeouts,
      retryAfterSeconds: 1,
    });
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  frontPort = (front.address() as net.AddressInfo).port;
});

beforeEach(() => {
  instanceSockets = [];
  frontSockets = [];
  log = { started: 0, ended: 0, failures: [] };
  timeouts = { idleTimeoutMs: 5_000, upstreamHeadersTimeoutMs: 5_000 };
  sockets = new UpstreamSockets({ maxConnectionsPerAddress: 8, idleTimeoutMs: 5_000 });
});

afterEach(() => {
  sockets.close();
  for (const socket of [...instanceSockets, ...frontSockets]) socket.destroy();
});

afterAll(async () => {
  await new Promise((resolve) => front.close(resolve));
  await new Promise((resolve) => instance.close(resolve));
});

/** Calls `onHead` with each request line the instance reads (requests without bodies). */
function onHeads(socket: net.Socket, onHead: (requestLine: string) => void): void {
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
      onHead(buffered.slice(0, buffered.indexOf('\r\n')));
      buffered = buffered.slice(end + 4);
    }
  });
}

/** A client connection that collects what comes back; `closed` settles when it closes or after `ms`. */
function connect(ms: number): { socket: net.Socket; text: () => string; closed: Promise<boolean> } {
  const socket = net.connect(frontPort, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { socket, text: () => text, closed };
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('SpliceConnection against an instance that misbehaves', () => {
  it('when the instance writes past its response Content-Length, then the extra bytes reach no one and its connection is not reused', async () => {
    // The instance believes its body is longer than it said: more of it comes 50 ms later, shaped as
    // a response. On a reused connection it would be read as the answer to the next request.
    serve = (socket) =>
      onHeads(socket, (line) => {
        if (line.startsWith('GET /one ')) {
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokXX');
          setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled'), 50);
        } else {
          const body = `genuine ${line.split(' ')[1]}`;
          setTimeout(
            () => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
            150,
          );
        }
      });
    const client = connect(5_000);
    client.socket.write(
      'GET /one HTTP/1.1\r\nHost: gw\r\n\r\nGET /two HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n',
    );
    expect(await client.closed).toBe(true);
    expect(client.text()).toMatch(
      /^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\nokHTTP\/1.1 200 OK\r\n[^]*\r\n\r\ngenuine \/two$/,
    );
    expect(client.text()).not.toContain('smuggled');
    expect(instanceSockets).toHaveLength(2);
    expect(log).toMatchObject({ started: 2, ended: 2 });
  });

  it('when the instance reads a large upload late, then the client is held back (the gateway reads a bounded part) and the body arrives whole once it reads', async () => {
    const size = 64 * 1024 * 1024;
    let read: () => void = () => undefined;
    serve = (socket) => {
      // Nothing is read until the test says: the instance's receive window fills.
      socket.pause();
      read = () => {
        const hash = createHash('sha256');
        let head = '';
        let bodyBytes = 0;
        socket.on('data', (chunk: Buffer) => {
          let body = chunk;
          if (!head.endsWith('\r\n\r\n')) {
            const text = head + chunk.toString('latin1');
            const end = text.indexOf('\r\n\r\n');
            if (end < 0) return void (head = text);
            body = chunk.subarray(end + 4 - head.length);
            head = text.slice(0, end + 4);
          }
          hash.update(body);
          bodyBytes += body.length;
          if (bodyBytes < size) return;
          const answer = `${bodyBytes} ${hash.digest('hex')}`;
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${answer.length}\r\n\r\n${answer}`);
        });
        socket.resume();
      };
    };
    const client = connect(30_000);
    await once(client.socket, 'connect');
    client.socket.write(`PUT /upload HTTP/1.1\r\nHost: gw\r\nContent-Length: ${size}\r\n\r\n`);
    const sent = createHash('sha256');
    let written = 0;
    const writing = (async () => {
      for (let i = 0; written < size; i++) {
        const piece = Buffer.alloc(1024 * 1024, i % 251);
        sent.update(piece);
        written += piece.length;
        if (!client.socket.write(piece)) await once(client.socket, 'drain');
      }
    })();
    await wait(1_000);
    // Held back: what the gateway read is what fits in the kernel buffers to the instance and one
    // socket write's worth. Without the pause it reads all 64 MiB into memory within that second.
    const readByGateway = (frontSockets[0] as net.Socket).bytesRead;
    expect(readByGateway).toBeLessThan(16 * 1024 * 1024);
    expect(written).toBeLessThan(size);
    read();
    await writing;
    const deadline = Date.now() + 20_000;
    while (!/\r\n\r\n\d+ [0-9a-f]{64}$/.test(client.text()) && Date.now() < deadline) await wait(20);
    const answer = client.text();
    expect(answer).toMatch(
      new RegExp(`^HTTP/1.1 200 OK\\r\\n[^]*\\r\\n\\r\\n${size} ${sent.digest('hex')}$`),
    );
    expect(log).toMatchObject({ started: 1, ended: 1 });
  });

  it('when the instance refuses a body before reading it (an early 413), then the client gets the answer at once, the connection closes and the instance connection is not pooled', async () => {
    serve = (socket) =>
      onHeads(socket, () => {
        const body = '{"error":"too_large","reason":"the request was too large"}\n';
        socket.write(
          `HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        // Kept open and read on, as a server that discards the rest of the body does.
        socket.resume();
      });
    const client = connect(5_000);
    // 8 MiB announced, 64 KiB sent: the rest never comes.
    client.socket.write(`PUT /db/doc HTTP/1.1\r\nHost: gw\r\nContent-Length: ${8 * 1024 * 1024}\r\n\r\n`);
    client.socket.write(Buffer.alloc(64 * 1024, 'x'));
    expect(await client.closed).toBe(true);
    expect(client.text()).toMatch(/^HTTP\/1.1 413 Request Entity Too Large\r\n[^]*Connection: close\r\n/);
    expect(client.text().match(/HTTP\/1.1 /g)).toHaveLength(1);
    // The instance connection is mid-body: lent again, the next request would be read as body bytes.
    expect(sockets.count(origin).idle).toBe(0);
    expect(log).toMatchObject({ started: 1, ended: 1 });
  });

  it('when the client is silent past its idle timeout while the instance answers, and the instance past its headers timeout once its head is out, then the exchange ends whole, both connections carry the next one, and the idle client connection then closes', async () => {
    timeouts = { idleTimeoutMs: 150, upstreamHeadersTimeoutMs: 400 };
    serve = (socket) =>
      onHeads(socket, (line) => {
        if (line.startsWith('GET /next '))
          return void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext');
        // The head after 250 ms (the client's 150 ms pass), the body's end 500 ms later (the 400 ms do).
        setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello'), 250);
        setTimeout(() => socket.write('world'), 750);
      });
    const client = connect(5_000);
    client.socket.write('GET /slow HTTP/1.1\r\nHost: gw\r\n\r\n');
    const deadline = Date.now() + 3_000;
    while (!client.text().endsWith('helloworld') && Date.now() < deadline) await wait(20);
    expect(client.text()).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\nhelloworld$/);
    client.socket.write('GET /next HTTP/1.1\r\nHost: gw\r\n\r\n');
    const idleFrom = Date.now();
    // The keep-alive silence is timed again from the last answer: the connection closes.
    expect(await client.closed).toBe(true);
    expect(Date.now() - idleFrom).toBeLessThan(2_000);
    expect(client.text()).toMatch(/helloworldHTTP\/1.1 200 OK\r\n[^]*\r\n\r\nnext$/);
    expect(instanceSockets).toHaveLength(1);
    expect(log).toEqual({ started: 2, ended: 2, failures: [] });
  });
});
