import http from 'node:http';
import type net from 'node:net';
import { connect } from 'node:net';
import fc from 'fast-check';
import { BODY_CONTINUES, BodyFraming } from '../../../../gateway/http/body-framing.js';
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
  /** Whether the connection ends after this request: the raw reader's `close`, llhttp's keep-alive decision. */
  close: boolean;
}

interface RawReading {
  taken: Read[];
  /** The request after the last taken one had its head taken and its body ran past the bytes. */
  midBody: boolean;
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
    // llhttp's should_keep_alive, as node:http hands it over, before anything else can change it.
    const close = !res.shouldKeepAlive;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      reading.complete.push({
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('latin1'),
        close,
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
function rawReading(bytes: Buffer): RawReading {
  const taken: Read[] = [];
  let rest = bytes;
  for (;;) {
    const head = readRawRequestHead(rest, MAX_HEAD_BYTES);
    if (typeof head === 'string') return { taken, midBody: false };
    const framing = new BodyFraming();
    framing.reset({ length: head.contentLength, chunked: head.chunked, untilClose: false });
    const end = framing.scan(rest, head.bodyStart);
    if (end < 0) return { taken, midBody: end === BODY_CONTINUES };
    const body = rest.subarray(head.bodyStart, end);
    taken.push({
      method: head.method,
      url: head.target,
      rawHeaders: head.rawHeaders,
      body: (head.chunked ? decodeChunked(body) : body).toString('latin1'),
      close: head.close,
    });
    if (head.close) return { taken, midBody: false };
    rest = rest.subarray(end);
  }
}

/**
 * The data of a chunked body the framing took. Bounded whatever the bytes: a body that does not
 * decode (a scanner that took a broken chunk end) is given back whole, to differ from llhttp's.
 */
function decodeChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = parseInt(body.toString('latin1', at, lineEnd), 16);
    if (lineEnd < 0 || Number.isNaN(size)) break;
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return body;
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
/**
 * A chunk with one thing wrong that a scanner could miss: the CRLF after its data missing, bare or
 * replaced; a size one off its data (so that CRLF lands in the data); a size of 13 to 20 digits,
 * small with leading zeros or large: llhttp takes up to 16 significant digits and refuses more.
 */
const oddChunk = fc
  .record({
    data: fc.uint8Array({ minLength: 1, maxLength: 20 }),
    size: fc.constantFrom('exact', 'more', 'less', 'padded', 'huge'),
    digits: fc.integer({ min: 13, max: 20 }),
    end: fc.constantFrom('\r\n', '', '\n', '\r', '\n\r', 'X\n', '\rX', '\r\r\n', ' \r\n'),
  })
  .map(({ data, size, digits, end }) => {
    const length = data.length + (size === 'more' ? 1 : size === 'less' ? -1 : 0);
    let hex = length.toString(16);
    if (size === 'padded') hex = hex.padStart(digits, '0');
    if (size === 'huge') hex = `1${hex.padStart(digits - 1, '0')}`;
    return `${hex}\r\n${Buffer.from(data).toString('latin1')}${end}`;
  });
const oddChunkedBody = fc
  .tuple(
    fc.array(chunk, { maxLength: 2 }),
    oddChunk,
    fc.array(chunk, { maxLength: 1 }),
    fc.constantFrom('0\r\n\r\n', '0\r\n\n', '0\r\nX\r\n', '0000000000000\r\n\r\n'),
  )
  .map(([before, odd, after, last]) => ({
    headers: 'Transfer-Encoding: chunked\r\n',
    bytes: `${before.join('')}${odd}${after.join('')}${last}`,
  }));

/** A Connection value the reader takes: one token, any case, blanks before and spaces after. */
const plainConnection = fc
  .tuple(
    blanks,
    fc.constantFrom('keep-alive', 'close', 'Keep-Alive', 'CLOSE', 'cLoSe'),
    fc.constantFrom('', ' ', '  '),
  )
  .map(([before, token, after]) => `${before}${token}${after}`);
/**
 * Connection values llhttp reads token by token (a `close` token anywhere ends the connection;
 * `closed` or `close x` does not): lists with odd spacing and case, a tab after the last token.
 */
const listedConnection = fc
  .tuple(
    blanks,
    fc.array(
      fc.tuple(
        fc.constantFrom(',', ', ', ' ,', ' , ', ',\t', ',,'),
        fc.constantFrom('close', 'Close', 'CLOSE', 'keep-alive', 'KEEP-ALIVE', 'Upgrade', 'foo', 'closed'),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    fc.constantFrom('', ' ', '\t', ',', ' x'),
  )
  .map(([before, items, after]) => {
    const list = items.map(([separator, token], i) => (i === 0 ? token : `${separator}${token}`));
    return `${before}${list.join('')}${after}`;
  });

interface Request {
  text: string;
  /** It sends Connection: close (in a spelling the reader takes). */
  close: boolean;
}
function requestOf(
  connections: fc.Arbitrary<string[]>,
  bodies: fc.Arbitrary<{ headers: string; bytes: string }>,
): fc.Arbitrary<Request> {
  return fc
    .record({
      method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'COPY', 'OPTIONS', 'PATCH'),
      target: fc.stringMatching(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/?"<>{}|-]{0,30}$/),
      headers: fc.array(header, { maxLength: 4 }),
      hostAt: fc.nat(),
      connections,
      body: bodies,
    })
    .map(({ method, target, headers, hostAt, connections, body }) => {
      const lines = [...headers, body.headers, ...connections.map((value) => `Connection:${value}\r\n`)];
      lines.splice(hostAt % (lines.length + 1), 0, 'Host: gw.example\r\n');
      return {
        text: `${method} ${target} HTTP/1.1\r\n${lines.join('')}\r\n${body.bytes}`,
        close: connections.some((value) => value.trim().toLowerCase() === 'close'),
      };
    });
}

/** A request of the shape the raw reader takes, serialised. */
const plainRequest = requestOf(
  fc.option(plainConnection, { nil: undefined }).map((value) => (value === undefined ? [] : [value])),
  body,
);
/** A request one step off that shape, in its Connection values or its chunks. */
const nearMissRequest = requestOf(
  fc.oneof(
    { weight: 1, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 3,
      arbitrary: fc.array(fc.oneof(plainConnection, listedConnection), { minLength: 1, maxLength: 2 }),
    },
  ),
  fc.oneof(body, oddChunkedBody),
);

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

function serialised(requests: Request[]): Buffer {
  return Buffer.from(`${requests.map((request) => request.text).join('')}${NEXT}`, 'latin1');
}

/**
 * The differential's rule: what the reader took, llhttp read alike (head, body, keep-alive); and
 * where the reader is still inside a body when the bytes end, llhttp read the same requests and is
 * too, instead of having refused the bytes (a broken chunk end, a size past 64 bits) the reader read on.
 */
function expectAlike(raw: RawReading, llhttp: LlhttpReading): void {
  expect(llhttp.complete.slice(0, raw.taken.length)).toEqual(raw.taken);
  if (raw.midBody) {
    expect([llhttp.complete.length, llhttp.error]).toEqual([raw.taken.length, 'HPE_INVALID_EOF_STATE']);
  }
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
          const oversized = requests.some((request) => request.text.indexOf('\r\n\r\n') + 4 > MAX_HEAD_BYTES);
          // The reader reads on to NEXT, unless a request ends the connection.
          const closing = requests.findIndex((request) => request.close);
          if (!oversized) expect(raw.taken).toHaveLength(closing < 0 ? requests.length + 1 : closing + 1);
          expectAlike(raw, llhttp);
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
            expectAlike(rawReading(bytes), await llhttpReading(bytes));
          },
        ),
        { numRuns: 600, seed: SEED },
      );
    },
    LOOPBACK_RUNS_TIMEOUT_MS,
  );

  it(
    'when requests are one step off the plain shape, in Connection lists or chunks, then what the reader takes llhttp reads alike',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(nearMissRequest, { minLength: 1, maxLength: 2 }), async (requests) => {
          const bytes = serialised(requests);
          expectAlike(rawReading(bytes), await llhttpReading(bytes));
        }),
        { numRuns: 1000, seed: SEED },
      );
    },
    LOOPBACK_RUNS_TIMEOUT_MS,
  );
});
