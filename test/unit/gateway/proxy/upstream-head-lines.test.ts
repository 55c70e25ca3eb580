import { seededIndex } from '../../../helpers/fuzz/seeded-index.js';
import { readRawRequestHead, type RawRequestHead } from '../../../../gateway/http/raw-request-head.js';
import { buildUpstreamHeaders, upstreamHeadLines } from '../../../../gateway/proxy/forward-headers.js';

/**
 * The fast path's request head for the instance (the client's lines copied as they came, the dropped
 * ones left out) against the full path's header rules (buildUpstreamHeaders on the pairs, as the fast
 * path built it before): the same headers in the same order, values alike once the blanks around
 * them are set aside, which no reader of the head keeps.
 */

const forwarded = {
  remoteAddress: '192.0.2.10',
  proto: 'https',
  host: 'app.ns.example.com',
  fromTrustedProxy: false,
};

/** Header lines read back into [name, value] pairs, values without blanks around them. */
function readBack(lines: string): string[][] {
  expect(lines.endsWith('\r\n')).toBe(true);
  return lines
    .slice(0, -2)
    .split('\r\n')
    .map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon), line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '')];
    });
}

function pairsOf(flat: readonly string[]): string[][] {
  const pairs: string[][] = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
  return pairs;
}

function read(head: string): RawRequestHead {
  const reading = readRawRequestHead(Buffer.from(head, 'latin1'), 16_384);
  if (typeof reading === 'string') throw new Error(`not taken: ${reading}`);
  return reading;
}

describe('upstreamHeadLines', () => {
  it('when no line is dropped, then the client lines are copied byte for byte and the X-Forwarded-* lines follow', () => {
    const lines =
      'Host: app.ns.example.com\r\nUser-Agent:\t curl/8 \t\r\nAuthorization: Basic YTpi\r\nAccept: */*';
    const head = read(`GET /db/doc HTTP/1.1\r\n${lines}\r\n\r\n`);
    expect(upstreamHeadLines(head, forwarded)).toBe(
      `${lines}\r\nX-Forwarded-For: 192.0.2.10\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Host: app.ns.example.com\r\n`,
    );
  });

  it('when hop-by-hop and X-Forwarded-* lines come first, between and last, then only those are left out', () => {
    const head = read(
      'PUT /db/doc HTTP/1.1\r\nConnection: keep-alive\r\nHost: h\r\nX-Forwarded-For: 10.0.0.9\r\n' +
        'Content-Length: 2\r\nte: trailers\r\nX-A:  1 \r\nx-forwarded-proto: http\r\n\r\nok',
    );
    expect(upstreamHeadLines(head, { ...forwarded, host: undefined, fromTrustedProxy: true })).toBe(
      'Host: h\r\nContent-Length: 2\r\nX-A:  1 \r\nX-Forwarded-For: 10.0.0.9, 192.0.2.10\r\nX-Forwarded-Proto: https\r\n',
    );
  });

  it('when heads are generated from the headers clients send, then the instance gets what the full path rules give', () => {
    const pool = [
      ['User-Agent', 'curl/8.5.0'],
      ['Accept', '*/*'],
      ['Accept-Encoding', 'gzip, deflate'],
      ['Authorization', 'Basic YWRtaW46cGFzc3dvcmQ='],
      ['Content-Type', 'application/json'],
      ['Cookie', 'AuthSession=abc'],
      ['Connection', 'keep-alive'],
      ['connection', 'close'],
      ['Keep-Alive', 'timeout=5'],
      ['TE', 'trailers'],
      ['Trailer', 'X-T'],
      ['Proxy-Authorization', 'Basic eA=='],
      ['Proxy-Authenticate', 'Basic'],
      ['X-Forwarded-For', '10.0.0.9'],
      ['x-forwarded-for', '10.0.0.8, 10.0.0.7'],
      ['X-Forwarded-Proto', 'http'],
      ['X-Forwarded-Host', 'evil.example'],
      ['If-None-Match', '"1-abc"'],
      ['X-Couch-Full-Commit', 'true'],
    ];
    const blanks = ['', ' ', '  ', '\t', ' \t'];
    const next = seededIndex(29);
    const mismatches: unknown[] = [];
    let taken = 0;
    for (let i = 0; i < 3_000; i++) {
      const pairs: string[][] = [];
      for (let k = next(9); k > 0; k--) pairs.push(pool[next(pool.length)] as string[]);
      pairs.splice(next(pairs.length + 1), 0, ['Host', 'app.ns.example.com']);
      if (next(3) === 0) pairs.splice(next(pairs.length + 1), 0, ['Transfer-Encoding', 'chunked']);
      let text = `${['GET', 'PUT', 'POST'][next(3)]} /db/doc HTTP/1.1\r\n`;
      for (const [name, value] of pairs) text += `${name}:${blanks[next(5)]}${value}${blanks[next(5)]}\r\n`;
      const reading = readRawRequestHead(Buffer.from(`${text}\r\n`, 'latin1'), 16_384);
      // Two Connection lines, or one beside a Transfer-Encoding: the raw head takes what llhttp takes.
      if (typeof reading === 'string') continue;
      taken += 1;
      const options = {
        ...forwarded,
        fromTrustedProxy: next(2) === 0,
        host: next(2) === 0 ? undefined : forwarded.host,
      };
      const got = readBack(upstreamHeadLines(reading, options));
      const expected = pairsOf(buildUpstreamHeaders(reading.rawHeaders, options));
      if (JSON.stringify(got) !== JSON.stringify(expected)) mismatches.push([text, got, expected]);
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(taken).toBeGreaterThan(2_000);
  });
});
