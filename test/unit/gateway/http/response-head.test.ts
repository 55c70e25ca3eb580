import { seededIndex } from '../../../helpers/fuzz/seeded-index.js';
import { HeaderNameSet } from '../../../../gateway/http/header-name-set.js';
import {
  hasNoBody,
  readResponseHead,
  RESPONSE_BROKEN,
  RESPONSE_INCOMPLETE,
  responseLines,
  type ResponseHead,
} from '../../../../gateway/http/response-head.js';

const NAMES = new HeaderNameSet(['location', 'x-show', 'x-a', 'x-b', 'content-disposition']);

const read = (text: string): ReturnType<typeof readResponseHead> =>
  readResponseHead(Buffer.from(text, 'latin1'), NAMES);

/** The named lines' [name, value] pairs of a head read whole. */
const named = (text: string): string[][] =>
  (read(text) as ResponseHead).lines.map((line) => [line.name, line.value]);

describe('readResponseHead', () => {
  it('when a head is whole, then its status, headers and framing are read, and where its body starts', () => {
    const text = 'HTTP/1.1 201 Created\r\nLocation: /db/x\r\nContent-Length: 12\r\n\r\n{"ok":true}\n';
    expect(read(text)).toEqual({
      status: 201,
      statusLineEnd: text.indexOf('\r\n'),
      headerEnd: text.indexOf('\r\n\r\n') + 2,
      lines: [{ name: 'location', start: 22, nameEnd: 30, end: 37, value: '/db/x' }],
      contentLength: 12,
      chunked: false,
      close: false,
      bodyStart: text.indexOf('{'),
    });
    // Only the lines named are noted: the others are copied as they came, never turned into strings.
    expect(text.slice(22, 37)).toBe('Location: /db/x');
    expect(read('HTTP/1.1 404 Object Not Found\r\n\r\n')).toMatchObject({ status: 404, lines: [] });
    expect(read('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n')).toMatchObject({
      status: 200,
      statusLineEnd: 12,
    });
    expect(read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n')).toMatchObject({
      contentLength: -1,
      chunked: true,
      close: true,
    });
    expect(read('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')).toMatchObject({ close: true });
  });

  it('when a header name or value, or the status text, holds what would split the head the client gets, then it is broken', () => {
    for (const text of [
      // undici refuses each of these (HPE_INVALID_HEADER_TOKEN and the like); written on, they reach the client.
      'HTTP/1.1 200 OK\r\nX-Show: a\nContent-Length: 0\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nX-Show: a\rb\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nX-Show: a\u0000b\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nX\nContent-Length: 0\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\nX Show: a\r\nContent-Length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\u0000\r\nContent-Length: 2\r\n\r\nok',
    ])
      expect(read(text)).toBe(RESPONSE_BROKEN);
    // obs-text (bytes 0x80-0xff) in a value or the status text is what the full path passes on: kept as sent.
    expect(
      named(
        'HTTP/1.1 200 \u00c9t\u00e9\r\nContent-Disposition: attachment; filename="caf\u00e9.txt"\r\n\r\n',
      ),
    ).toEqual([['content-disposition', 'attachment; filename="caf\u00e9.txt"']]);
    expect(read('HTTP/1.1 200 OK\r\nX-Show: a\u007fb\r\nContent-Length: 2\r\n\r\nok')).toBe(RESPONSE_BROKEN);
    // Blanks inside and around a value are kept as before.
    expect(named('HTTP/1.1 200 OK\r\nX-Show: \ta b\t\r\nContent-Length: 2\r\n\r\nok')).toEqual([
      ['x-show', 'a b'],
    ]);
  });

  it('when a value has blanks and 0xa0 bytes around it, then only the blanks go, as llhttp reads it, and a framing value with one is broken', () => {
    expect(named('HTTP/1.1 200 OK\r\nX-A: \xa0v\xa0 \r\nX-B:\t w \t\r\nContent-Length: 0\r\n\r\n')).toEqual([
      ['x-a', '\xa0v\xa0'],
      ['x-b', 'w'],
    ]);
    // Trimmed away, the 0xa0 made these a length and chunked: llhttp reads neither so.
    expect(read('HTTP/1.1 200 OK\r\nContent-Length: 2\xa0\r\n\r\nok')).toBe(RESPONSE_BROKEN);
    expect(read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\xa0\r\n\r\n')).toBe(RESPONSE_BROKEN);
  });

  it('when the blank line has not come, then it is incomplete', () => {
    expect(read('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n')).toBe(RESPONSE_INCOMPLETE);
  });

  it('when framing is ambiguous or the status line is not HTTP/1.x, then it is broken', () => {
    for (const text of [
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
      'HTTP/2 200\r\n\r\n',
      'HTTP/1.1 200 OK\r\nno colon\r\n\r\n',
    ]) {
      expect(read(text)).toBe(RESPONSE_BROKEN);
    }
  });

  it('when a status line is read by its characters, then it is taken or broken as the former regular expression and check took it', () => {
    // The reader before it: this pattern on the first line, then no control or DEL in the reason.
    const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
    const reference = (line: string): number | undefined => {
      const match = STATUS_LINE.exec(line);
      return match === null || [...(match[3] ?? '')].some((c) => (c < ' ' && c !== '\t') || c === '\x7f')
        ? undefined
        : Number(match[2]);
    };
    const pieces = [
      'HTTP/1.',
      'HTTP/',
      '1',
      '0',
      '2',
      ' ',
      '  ',
      '\t',
      '200',
      '20',
      '2000',
      'OK',
      'ok',
      'é',
      '\x7f',
      '\x00',
      '\r',
      '\n',
      'http',
    ];
    const next = seededIndex(7);
    const lines = [
      'HTTP/1.1 200 OK',
      'HTTP/1.0 404',
      'HTTP/1.1 200 ',
      'HTTP/1.1 200 \t',
      'HTTP/1.2 200 OK',
      'HTTP/1.1 20 OK',
      'HTTP/1.1 2000 OK',
      'HTTP/1.1 200OK',
      'http/1.1 200 OK',
      'HTTP/1.1  200 OK',
      'HTTP/1.1',
    ];
    // A well-formed line's parts, each swapped for a random piece one time in four.
    const parts = ['HTTP/1.', '1', ' ', '200', ' ', 'OK'];
    for (let i = 0; i < 20_000; i++) {
      let line = '';
      for (const part of parts) line += next(4) === 0 ? pieces[next(pieces.length)] : part;
      lines.push(line);
    }
    let taken = 0;
    const mismatches: unknown[] = [];
    for (const line of lines) {
      const reading = read(`${line}\r\nContent-Length: 0\r\n\r\n`);
      // A CR or LF in the generated line makes another head: broken either way (no colon, or a bare one).
      const expected = /[\r\n]/.test(line) ? undefined : reference(line);
      const got = reading === RESPONSE_BROKEN ? undefined : (reading as ResponseHead).status;
      if (got !== expected) mismatches.push([line, got, expected]);
      if (got !== undefined) taken += 1;
    }
    expect(mismatches).toEqual([]);
    expect(taken).toBeGreaterThan(4_000);
    expect(taken).toBeLessThan(lines.length - 4_000);
  });

  it('when every line is asked for, then each comes with its name lower-cased and its value', () => {
    const text = 'HTTP/1.1 200 OK\r\nX-One:  a \r\nConnection: x-one\r\nContent-Length: 0\r\n\r\n';
    const buf = Buffer.from(text, 'latin1');
    const lines = responseLines(buf, readResponseHead(buf, NAMES) as ResponseHead);
    expect(lines.map((line) => [line.name, line.value, text.slice(line.start, line.end)])).toEqual([
      ['x-one', 'a', 'X-One:  a '],
      ['connection', 'x-one', 'Connection: x-one'],
      ['content-length', '0', 'Content-Length: 0'],
    ]);
  });

  it('when the request was HEAD or the status is 204 or 304, then the response has no body', () => {
    expect(hasNoBody('HEAD', 200)).toBe(true);
    expect(hasNoBody('GET', 204)).toBe(true);
    expect(hasNoBody('GET', 304)).toBe(true);
    expect(hasNoBody('GET', 200)).toBe(false);
  });
});
