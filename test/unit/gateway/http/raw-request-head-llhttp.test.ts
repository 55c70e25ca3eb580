import http from 'node:http';
import type net from 'node:net';
import { connect } from 'node:net';
import fc from 'fast-check';
import {
  byteEdit,
  edited,
  extendedRequest,
  lineEdit,
  nearMissRequest,
  plainRequest,
  serialised,
} from '../../../helpers/fuzz/llhttp-request-generators.js';
import {
  BODY_CONTINUES,
  BodyFraming,
  FRAMING_BROKEN,
  writeKept,
} from '../../../../gateway/http/body-framing.js';
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
  /** The request after the last taken one had its head taken and its framing broken: it was cut. */
  cut: boolean;
}

interface LlhttpReading {
  /** Requests whose bodies llhttp read to their end. */
  complete: Read[];
  /** Per complete request: whether a trailer was a Connection or Proxy-Connection field. */
  connectionTrailers: boolean[];
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
      reading.connectionTrailers.push(
        req.rawTrailers.some((value, i) => i % 2 === 0 && /^(proxy-)?connection$/i.test(value)),
      );
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
  const reading: LlhttpReading = { complete: [], connectionTrailers: [], error: undefined };
  current = reading;
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    socket.resume();
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
  // A Connection: close among trailers comes after node:http's keep-alive decision: llhttp then
  // refuses what follows on the connection (HPE_CLOSED_CONNECTION), which is its close. (That error
  // alone could come from a later request node:http never handed over, one without a Host.)
  const last = reading.complete.at(-1);
  if (last !== undefined && reading.error === 'HPE_CLOSED_CONNECTION' && reading.connectionTrailers.at(-1))
    last.close = true;
  return reading;
}

/**
 * Requests the raw reader takes from `bytes`, in order, up to the first it declines or cannot frame.
 * Each body is scanned in pieces of `piece` bytes, and what the fast path would pass on (writeKept:
 * without extensions and trailers) is what is decoded.
 */
function rawReading(bytes: Buffer, piece = bytes.length): RawReading {
  const taken: Read[] = [];
  let rest = bytes;
  for (;;) {
    const head = readRawRequestHead(rest, MAX_HEAD_BYTES);
    if (typeof head === 'string') return { taken, midBody: false, cut: false };
    const framing = new BodyFraming(MAX_HEAD_BYTES);
    framing.reset({ length: head.contentLength, chunked: head.chunked, untilClose: false });
    const kept: Buffer[] = [];
    const sink = { write: (part: Buffer) => kept.push(part) > 0 };
    let end: number;
    // Scanned once at least: a body of no bytes ends where it starts, at the end of the bytes too.
    for (let from = head.bodyStart; ;) {
      const part = rest.subarray(from, Math.min(from + piece, rest.length));
      const found = framing.scan(part, 0);
      writeKept(sink, framing, part, 0, found < 0 ? part.length : found);
      end = found < 0 ? found : from + found;
      from += part.length;
      if (end !== BODY_CONTINUES || from >= rest.length) break;
    }
    if (end < 0) return { taken, midBody: end === BODY_CONTINUES, cut: end === FRAMING_BROKEN };
    const body = Buffer.concat(kept);
    const close = head.close || framing.closeRequested;
    taken.push({
      method: head.method,
      url: head.target,
      rawHeaders: head.rawHeaders,
      body: (head.chunked ? decodeChunked(body) : body).toString('latin1'),
      close,
    });
    if (close) return { taken, midBody: false, cut: false };
    rest = rest.subarray(end);
  }
}

/**
 * The data of a chunked body as passed on: size lines of hex digits alone and an empty line after
 * the last chunk, nothing else. Bounded whatever the bytes: a body that does not decode so (a
 * scanner that took a broken chunk end, or kept an extension or a trailer) is given back whole, to
 * differ from llhttp's.
 */
function decodeChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length;) {
    const lineEnd = body.indexOf('\r\n', at);
    const line = body.toString('latin1', at, lineEnd);
    if (lineEnd < 0 || !/^[0-9a-fA-F]+$/.test(line)) break;
    const size = parseInt(line, 16);
    if (size === 0) return lineEnd + 4 === body.length ? Buffer.concat(parts) : body;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return body;
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
  // Its head already sent, a request whose framing breaks is cut: only one llhttp refuses too.
  if (raw.cut) expect([llhttp.complete.length, llhttp.error]).toEqual([raw.taken.length, expect.any(String)]);
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

  it(
    'when chunked bodies carry extensions and trailers, valid or one step off, then the reader reads and cuts them as llhttp does, in pieces of any size',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(extendedRequest, { minLength: 1, maxLength: 2 }),
          fc.integer({ min: 1, max: 64 }),
          async (requests, piece) => {
            const bytes = serialised(requests);
            expectAlike(rawReading(bytes, piece), await llhttpReading(bytes));
          },
        ),
        { numRuns: 600, seed: SEED },
      );
    },
    LOOPBACK_RUNS_TIMEOUT_MS,
  );

  it("when extensions or trailers come to Node's limits, then the reader cuts a request exactly where llhttp refuses it", async () => {
    const chunked = (extension: string, trailers: string): string =>
      `POST / HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n1${extension}\r\na\r\n0\r\n${trailers}\r\n`;
    // Node counts a line's extension names and values (16 KiB), and trailers' names and values
    // (maxHeaderSize): each group runs from under its limit to over it.
    const groups = [
      (n: number) => chunked(`;${'n'.repeat(n)}`, ''),
      (n: number) => chunked(`;n=${'v'.repeat(n - 1)}`, ''),
      (n: number) => chunked(`;a;=;n="${'q\\"'.repeat((n - 4) / 3)}${'q'.repeat((n - 4) % 3)}"`, ''),
    ].map((text) => [16_382, 16_383, 16_384, 16_385, 16_386].map(text));
    groups.push(
      [-2, -1, 0, 1].map((d) => chunked('', `X:  ${'v'.repeat(MAX_HEAD_BYTES + d - 2)} \r\n`)),
      [-2, -1, 0, 1].map((d) => chunked('', `Xy:\t${'v'.repeat(MAX_HEAD_BYTES + d - 5)}\r\nZ:\r\nW: v\r\n`)),
    );
    for (const texts of groups) {
      const cuts: boolean[] = [];
      for (const text of texts) {
        const bytes = serialised([{ text, close: false }]);
        const raw = rawReading(bytes);
        expectAlike(raw, await llhttpReading(bytes));
        cuts.push(raw.cut);
      }
      expect(cuts).toContain(true);
      expect(cuts).toContain(false);
    }
  });
});
