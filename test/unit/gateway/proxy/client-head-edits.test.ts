import { seededIndex } from '../../../helpers/fuzz/seeded-index.js';
import { readResponseHead, type ResponseHead } from '../../../../gateway/http/response-head.js';
import { clientResponseHead } from '../../../../gateway/http/splice-response.js';
import {
  buildClientHeaders,
  CLIENT_RESPONSE_LINE_NAMES,
  clientHeadEdits,
} from '../../../../gateway/proxy/forward-headers.js';
import { PATH_FORM_ISOLATION_HEADERS } from '../../../../gateway/proxy/path-form-isolation.js';

/**
 * The fast path's client response head (the instance's lines copied as they came, the edited ones
 * written anew) against the full path's header rules (buildClientHeaders on the head read into pairs,
 * as the fast path built it before): the same headers in the same order, values alike once the
 * blanks around them are set aside, which no reader of the head keeps.
 */

const rewrites = {
  locationForClient: (location: string) => `/db/ns/one${location}`,
  setCookieForClient: (cookie: string) => `${cookie}; Path=/db/ns/one`,
};

/** A head read back into its status line and [name, value] pairs, values without blanks around them. */
function readBack(text: string): { status: string; headers: string[][]; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const [status = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers = lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '')];
  });
  return { status, headers, body: text.slice(end + 4) };
}

/** The client's head as the fast path built it before this change, from the full path's rules. */
function reference(
  statusLine: string,
  pairs: string[][],
  extra: readonly string[],
  framing: { chunked: boolean; close: boolean },
): string {
  const headers = buildClientHeaders(pairs.flat(), rewrites, extra);
  const [, code = '', reason = ''] = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine) ?? [];
  let text = `HTTP/1.1 ${code} ${reason}\r\n`;
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  if (framing.chunked) text += 'Transfer-Encoding: chunked\r\n';
  if (framing.close) text += 'Connection: close\r\n';
  return `${text}\r\n`;
}

function fastPath(
  head: string,
  extra: readonly string[],
  framing: { chunked: boolean; close: boolean },
  body = '',
): string {
  const buf = Buffer.from(head + body, 'latin1');
  const response = readResponseHead(buf, CLIENT_RESPONSE_LINE_NAMES) as ResponseHead;
  let lines = '';
  for (let i = 0; i < extra.length; i += 2) lines += `${extra[i]}: ${extra[i + 1]}\r\n`;
  const edits = clientHeadEdits(buf, response, rewrites, lines);
  const out = clientResponseHead(buf, { response, edits, ...framing }, body.length);
  buf.copy(out, out.length - body.length, response.bodyStart);
  return out.toString('latin1');
}

describe('clientResponseHead with clientHeadEdits', () => {
  it('when no line is edited, then the instance lines are copied byte for byte, the isolation headers and framing after them', () => {
    const lines =
      'Cache-Control: must-revalidate\r\nContent-Length: 2\r\nX-Odd:\t a \t\r\nServer: CouchDB/3.5.2\r\n';
    const out = fastPath(
      `HTTP/1.1 200 OK\r\n${lines}\r\n`,
      PATH_FORM_ISOLATION_HEADERS,
      { chunked: false, close: true },
      'ok',
    );
    expect(out).toBe(
      `HTTP/1.1 200 OK\r\n${lines}Content-Security-Policy: sandbox\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nok`,
    );
    expect(fastPath('HTTP/1.0 204\r\n\r\n', [], { chunked: false, close: false })).toBe(
      'HTTP/1.1 204 \r\n\r\n',
    );
  });

  it('when the head names no line to edit, then the edits share one empty list of values (no array a response)', () => {
    const buf = Buffer.from(
      'HTTP/1.1 200 OK\r\nServer: CouchDB/3.5.2\r\nContent-Length: 2\r\n\r\nok',
      'latin1',
    );
    const response = readResponseHead(buf, CLIENT_RESPONSE_LINE_NAMES) as ResponseHead;
    const first = clientHeadEdits(buf, response, rewrites, '');
    const second = clientHeadEdits(buf, response, rewrites, '');
    expect(first).toEqual({ lines: [], values: [], extraLines: '' });
    expect(second.values).toBe(first.values);
  });

  it('when lines are hop-by-hop, a Location or a Set-Cookie, or named by Connection, then only those change, as the full path changes them', () => {
    const head =
      'HTTP/1.1 201 Created\r\nLocation:  /db/doc \r\nX-A: 1\r\nConnection: X-B, keep-alive\r\nx-b: 2\r\n' +
      'Transfer-Encoding: chunked\r\nSet-Cookie: AuthSession=x; Path=/\r\nKeep-Alive: timeout=5\r\nETag: "1"\r\n\r\n';
    expect(fastPath(head, [], { chunked: true, close: false })).toBe(
      'HTTP/1.1 201 Created\r\nLocation: /db/ns/one/db/doc\r\nX-A: 1\r\nSet-Cookie: AuthSession=x; Path=/; Path=/db/ns/one\r\n' +
        'ETag: "1"\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
  });

  it('when heads are generated from the headers CouchDB and others send, then the client gets what the full path rules give', () => {
    const pool = [
      ['Cache-Control', 'must-revalidate'],
      ['Content-Type', 'application/json'],
      ['Date', 'Sun, 29 Nov 2026 05:00:00 GMT'],
      ['ETag', '"1-abc"'],
      ['Server', 'CouchDB/3.5.2 (Erlang OTP/26)'],
      ['X-Couch-Request-ID', 'f00d'],
      ['X-CouchDB-Body-Time', '0'],
      ['Location', 'http://10.0.0.1:5984/db/doc'],
      ['location', '/db/doc2'],
      ['Set-Cookie', 'AuthSession=abc; Version=1; Path=/; HttpOnly'],
      ['Connection', 'keep-alive'],
      ['Connection', 'close'],
      ['Connection', 'X-Couch-Request-ID'],
      ['Keep-Alive', 'timeout=5'],
      ['TE', 'trailers'],
      ['Trailer', 'X-T'],
      ['Upgrade', 'h2c'],
      ['Proxy-Authenticate', 'Basic'],
      ['Expect', '100-continue'],
      ['X-Forwarded-For', '10.0.0.9'],
      ['Vary', 'Accept-Encoding'],
      ['X-Cafe', 'caf\u00e9'],
    ];
    const blanks = ['', ' ', '  ', '\t', ' \t'];
    const next = seededIndex(11);
    const mismatches: unknown[] = [];
    for (let i = 0; i < 3_000; i++) {
      const pairs: string[][] = [];
      for (let k = next(9); k > 0; k--) pairs.push(pool[next(pool.length)] as string[]);
      const statusLine = [
        'HTTP/1.1 200 OK',
        'HTTP/1.1 201 Created',
        'HTTP/1.0 404 Object Not Found',
        'HTTP/1.1 304',
      ][next(4)] as string;
      let head = `${statusLine}\r\n`;
      for (const [name, value] of pairs) head += `${name}:${blanks[next(5)]}${value}${blanks[next(5)]}\r\n`;
      head += '\r\n';
      const extra = next(2) === 0 ? PATH_FORM_ISOLATION_HEADERS : [];
      const framing = { chunked: next(2) === 0, close: next(2) === 0 };
      const got = readBack(fastPath(head, extra, framing, 'body'));
      const expected = readBack(reference(statusLine, pairs, extra, framing));
      if (JSON.stringify(got) !== JSON.stringify({ ...expected, body: 'body' }))
        mismatches.push([head, got, expected]);
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
  });
});
