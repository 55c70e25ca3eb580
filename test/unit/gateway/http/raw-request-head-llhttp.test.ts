import http from 'node:http';
import type net from 'node:net';
import { connect } from 'node:net';
import fc from 'fast-check';
import { BodyFraming } from '../../../../gateway/http/body-framing.js';
import { readRawRequestHead } from '../../../../gateway/http/raw-request-head.js';

/**
 * The raw reader and body framing against Node's own parser (llhttp), on the same bytes: a
 * node:http server on loopback reads them, and whatever the raw reader takes (a head, and the end
 * of its body) must be what llhttp took, request for request. The reader may decline what llhttp
 * takes (node:http reads it then); it must never take what llhttp refuses or frames otherwise,
 * which is what a request smuggled between two parsers would need.
 */

const MAX_HEAD_BYTES = 2048;
/** Fixed, as the other fuzz suites': a divergence CI finds is found again with the same FUZZ_SEED. */
const SEED = Number(process.env.FUZZ_SEED ?? 29);
/** Hundreds of loopback connections, in-process: a few seconds, more on a loaded machine. */
const LOOPBACK_RUNS_TIMEOUT_MS = 60_000;
/** Appended to every case: where llhttp and the reader must both find the next request. */
const NEXT = 'GET /next HTTP/1.1\r\nHost: next\r\nConnection: close\r\n\r\n';

interface Read {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

interface LlhttpReading {
  /** Requests whose bodies llhttp read to their end. */
  complete: Read[];
  error: string | undefined;
}

let server: http.Server;
let port: number;
/** The case being read: one connection at a time. */
let current: LlhttpReading;

beforeAll(async () => {
  server = http.createServer({ maxHeaderSize: MAX_HEAD_BYTES }, (req, res) => {
    const reading = current;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      reading.complete.push({
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('latin1'),
      });
      res.end();
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: net.Socket) => {
    current.error ??= err.code ?? err.message;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** What llhttp makes of `bytes`, sent on one connection that the client then half-closes. */
async function llhttpReading(bytes: Buffer): Promise<LlhttpReading> {
  const reading: LlhttpReading = { complete: [], error: undefined };
  current = reading;
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    socket.resume();
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
  return reading;
}

/** Requests the raw reader takes from `bytes`, in order, up to the first it declines or cannot frame. */
function rawReading(bytes: Buffer): Read[] {
  const taken: Read[] = [];
  let rest = bytes;
  for (;;) {
    const head = readRawRequestHead(rest, MAX_HEAD_BYTES);
    if (typeof head === 'string') return taken;
    const framing = new BodyFraming();
    framing.reset({ length: head.contentLength, chunked: head.chunked, untilClose: false });
    const end = framing.scan(rest, head.bodyStart);
    if (end < 0) return taken;
    const body = rest.subarray(head.bodyStart, end);
    taken.push({
      method: head.method,
      url: head.target,
      rawHeaders: head.rawHeaders,
      body: (head.chunked ? decodeChunked(body) : body).toString('latin1'),
    });
    if (head.close) return taken;
    rest = rest.subarray(end);
  }
}

/** The data of a chunked body the framing accepted (so: sizes, CRLFs, a last chunk, no trailer). */
function decodeChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = parseInt(body.toString('latin1', at, lineEnd), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

const tokenName = fc
  .stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,16}$/)
  .filter(
    (name) =>
      !['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade'].includes(
        name.toLowerCase(),
      ),
  );
const blanks = fc.constantFrom('', ' ', '\t', '  ');
const headerValue = fc.oneof(
  { weight: 9, arbitrary: fc.stringMatching(/^[!-~]([ -~]{0,40}[!-~])?$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[!-~]{1,1500}$/) },
);
const header = fc
  .tuple(tokenName, blanks, headerValue, blanks)
  .map(([name, before, value, after]) => `${name}:${before}${value}${after}\r\n`);
const chunk = fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.boolean()).map(([data, upper]) => {
  const size = data.length.toString(16);
  return `${upper ? size.toUpperCase() : size}\r\n${Buffer.from(data).toString('latin1')}\r\n`;
});
const body = fc.oneof(
  fc.constant({ headers: '', bytes: '' }),
  fc.uint8Array({ maxLength: 60 }).map((data) => ({
    headers: `Content-Length: ${data.length}\r\n`,
    bytes: Buffer.from(data).toString('latin1'),
  })),
  fc.array(chunk, { maxLength: 3 }).map((chunks) => ({
    headers: 'Transfer-Encoding: chunked\r\n',
    bytes: `${chunks.join('')}0\r\n\r\n`,
  })),
);

/** A request of the shape the raw reader takes, serialised. */
const plainRequest = fc
  .record({
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'COPY', 'OPTIONS', 'PATCH'),
    target: fc.stringMatching(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/?"<>{}|-]{0,30}$/),
    headers: fc.array(header, { maxLength: 4 }),
    hostAt: fc.nat(),
    keepAlive: fc.boolean(),
    body,
  })
  .map(({ method, target, headers, hostAt, keepAlive, body }) => {
    const lines = [...headers, body.headers, keepAlive ? 'Connection: keep-alive\r\n' : ''];
    lines.splice(hostAt % (lines.length + 1), 0, 'Host: gw.example\r\n');
    return `${method} ${target} HTTP/1.1\r\n${lines.join('')}\r\n${body.bytes}`;
  });

/** Bytes parsers are known to disagree on: smuggling's raw material, put anywhere. */
const byteEdit = fc.record({
  at: fc.nat(),
  remove: fc.nat({ max: 3 }),
  insert: fc.oneof(
    fc.constantFrom(
      '\r',
      '\n',
      ' ',
      '\t',
      ':',
      '\0',
      '\x7f',
      '\x80',
      ',',
      ';',
      '0',
      'a',
      '\r\n',
      '\n\n',
      '0\r\n\r\n',
    ),
    fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)),
  ),
});
/**
 * Lines put at the start of a line: headers that conflict or fold, where headers are read; chunk
 * sizes with a bare LF, a blank, an extension or a trailer, where a chunked body is read.
 */
const lineEdit = fc.record({
  line: fc.nat(),
  insert: fc.constantFrom(
    'Content-Length: 3',
    'Content-Length: 0',
    'Content-Length : 3',
    'Content-Length: +3',
    'Content-Length: 3, 3',
    'Content-Length:\t3\t',
    'Transfer-Encoding: chunked',
    'Transfer-Encoding: gzip, chunked',
    'Transfer-Encoding: chunked, identity',
    'Transfer-Encoding : chunked',
    ' Transfer-Encoding: chunked',
    '\tfolded',
    'Host: other',
    'Expect: 100-continue',
    'Connection: upgrade',
    'Connection: close',
    'Upgrade: websocket',
    'X: a\nContent-Length: 3',
    'X: a\rContent-Length: 3',
    '1\na',
    '1 \r\na',
    '1;x=y\r\na',
    '0\r\nX: trailer',
    '0\n',
  ),
});
type Edit = { at: number; remove: number; insert: string } | { line: number; insert: string };

function edited(text: string, edit: Edit): string {
  if ('at' in edit) {
    const where = edit.at % (text.length + 1);
    return text.slice(0, where) + edit.insert + text.slice(where + edit.remove);
  }
  const starts = [...text.matchAll(/\r\n/g)].map((match) => (match.index ?? 0) + 2);
  const where = starts[edit.line % starts.length] ?? 0;
  return `${text.slice(0, where)}${edit.insert}\r\n${text.slice(where)}`;
}

function serialised(requests: string[]): Buffer {
  return Buffer.from(`${requests.join('')}${NEXT}`, 'latin1');
}

describe('the raw request reader against llhttp', () => {
  it(
    'when requests have the plain shape, then the reader takes each one as llhttp reads it',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(plainRequest, { minLength: 1, maxLength: 3 }), async (requests) => {
          const bytes = serialised(requests);
          const raw = rawReading(bytes);
          const llhttp = await llhttpReading(bytes);
          const oversized = requests.some((request) => request.indexOf('\r\n\r\n') + 4 > MAX_HEAD_BYTES);
          if (!oversized) expect(raw).toHaveLength(requests.length + 1);
          expect(llhttp.complete.slice(0, raw.length)).toEqual(raw);
        }),
        { numRuns: 150, seed: SEED },
      );
    },
    LOOPBACK_RUNS_TIMEOUT_MS,
  );

  it(
    'when the bytes are edited anywhere, then whatever the reader still takes llhttp reads alike',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(plainRequest, { minLength: 1, maxLength: 2 }),
          fc.array(fc.oneof(byteEdit, lineEdit), { minLength: 1, maxLength: 3 }),
          async (requests, edits) => {
            const text = edits.reduce(edited, serialised(requests).toString('latin1'));
            const bytes = Buffer.from(text, 'latin1');
            const raw = rawReading(bytes);
            const llhttp = await llhttpReading(bytes);
            expect(llhttp.complete.slice(0, raw.length)).toEqual(raw);
          },
        ),
        { numRuns: 600, seed: SEED },
      );
    },
    LOOPBACK_RUNS_TIMEOUT_MS,
  );
});
