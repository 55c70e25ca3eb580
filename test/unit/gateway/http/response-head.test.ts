import {
  hasNoBody,
  readResponseHead,
  RESPONSE_BROKEN,
  RESPONSE_INCOMPLETE,
} from '../../../../gateway/http/response-head.js';

const read = (text: string): ReturnType<typeof readResponseHead> =>
  readResponseHead(Buffer.from(text, 'latin1'));

describe('readResponseHead', () => {
  it('when a head is whole, then its status, headers and framing are read, and where its body starts', () => {
    const text = 'HTTP/1.1 201 Created\r\nLocation: /db/x\r\nContent-Length: 12\r\n\r\n{"ok":true}\n';
    expect(read(text)).toEqual({
      status: 201,
      statusText: 'Created',
      rawHeaders: ['Location', '/db/x', 'Content-Length', '12'],
      contentLength: 12,
      chunked: false,
      close: false,
      bodyStart: text.indexOf('{'),
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
      read('HTTP/1.1 200 \u00c9t\u00e9\r\nContent-Disposition: attachment; filename="caf\u00e9.txt"\r\n\r\n'),
    ).toMatchObject({
      statusText: '\u00c9t\u00e9',
      rawHeaders: ['Content-Disposition', 'attachment; filename="caf\u00e9.txt"'],
    });
    expect(read('HTTP/1.1 200 OK\r\nX-Show: a\u007fb\r\nContent-Length: 2\r\n\r\nok')).toBe(RESPONSE_BROKEN);
    // Blanks inside and around a value are kept as before.
    expect(read('HTTP/1.1 200 OK\r\nX-Show: \ta b\t\r\nContent-Length: 2\r\n\r\nok')).toMatchObject({
      rawHeaders: ['X-Show', 'a b', 'Content-Length', '2'],
    });
  });

  it('when a value has blanks and 0xa0 bytes around it, then only the blanks go, as llhttp reads it, and a framing value with one is broken', () => {
    expect(
      read('HTTP/1.1 200 OK\r\nX-A: \xa0v\xa0 \r\nX-B:\t w \t\r\nContent-Length: 0\r\n\r\n'),
    ).toMatchObject({
      rawHeaders: ['X-A', '\xa0v\xa0', 'X-B', 'w', 'Content-Length', '0'],
    });
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

  it('when the request was HEAD or the status is 204 or 304, then the response has no body', () => {
    expect(hasNoBody('HEAD', 200)).toBe(true);
    expect(hasNoBody('GET', 204)).toBe(true);
    expect(hasNoBody('GET', 304)).toBe(true);
    expect(hasNoBody('GET', 200)).toBe(false);
  });
});
