import fc from 'fast-check';

/**
 * Requests for the raw reader's differential against llhttp
 * (test/unit/gateway/http/raw-request-head-llhttp.test.ts): the plain shape the reader takes, the
 * same one step off it (Connection lists, odd chunks), and edits of bytes and lines that parsers
 * are known to read differently.
 */

/** Appended to every case: where llhttp and the reader must both find the next request. */
const NEXT = 'GET /next HTTP/1.1\r\nHost: next\r\nConnection: close\r\n\r\n';

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

/** A chunk extension llhttp takes: `;name`, `;name=token` or `;name="quoted"`, names and values possibly empty. */
const extensionToken = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{0,8}$/);
const quotedString = fc
  .array(
    fc.oneof(
      fc.stringMatching(/^[\t !#-[\]-~]{1,6}$/),
      fc.constantFrom('\\"', '\\\\', '\\a', '\\\t', '\\\x80', '\x80', '\xff'),
    ),
    { maxLength: 4 },
  )
  .map((parts) => `"${parts.join('')}"`);
const plainExtension = fc
  .tuple(extensionToken, fc.option(fc.oneof(extensionToken, quotedString), { nil: undefined }))
  .map(([name, value]) => (value === undefined ? `;${name}` : `;${name}=${value}`));
/** One step off: blanks, bare LFs, unclosed or trailing quotes, controls; `;a;` and `;=` llhttp takes. */
const oddExtension = fc.constantFrom(
  ' ;a',
  ';;a',
  '; a',
  ';a =b',
  ';a= b',
  ';a=b c',
  ';a="b',
  ';a="b"c',
  ';a=b"c"',
  ';\ta',
  ';a\t',
  ';a=\x7f',
  ';a="\x7f"',
  ';a="\\\x00"',
  ';',
  ';a\n',
  ';a=""',
  ';=',
  ';a;',
  '\t',
  ' ',
);
/** Near Node's 16 KiB limit on a line's extension names and values (name, token value, quoted value). */
const longExtension = fc
  .tuple(fc.integer({ min: 16_378, max: 16_390 }), fc.constantFrom('name', 'token', 'quoted'))
  .map(([bytes, kind]) =>
    kind === 'name'
      ? `;${'n'.repeat(bytes)}`
      : kind === 'token'
        ? `;n=${'v'.repeat(bytes - 1)}`
        : `;n="${'q'.repeat(bytes - 3)}"`,
  );
const extensions = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: plainExtension },
      { weight: 2, arbitrary: oddExtension },
      { weight: 1, arbitrary: longExtension },
    ),
    { maxLength: 3 },
  )
  .map((parts) => parts.join(''));
/** Trailer fields: any names, the ones llhttp reads for more (any case), and values of every kind. */
const trailerName = fc.oneof(
  tokenName,
  fc.constantFrom(
    'Connection',
    'proxy-connection',
    'Content-Length',
    'TRANSFER-ENCODING',
    'Upgrade',
    'Connections',
    'Content-Lengthy',
  ),
);
const trailerValue = fc.oneof(
  headerValue,
  plainConnection,
  fc.constantFrom('', 'chunked', '\x80\xff', 'a\x7fb', 'a\x00b', 'close,\tclose', 'x, close  ', 'close \t'),
);
const plainTrailer = fc
  .tuple(trailerName, blanks, trailerValue, blanks)
  .map(([name, before, value, after]) => `${name}:${before}${value}${after}\r\n`);
/** Connection trailers: llhttp reads a close token in them after node:http's keep-alive decision. */
const connectionTrailer = fc
  .tuple(
    fc.constantFrom('Connection', 'proxy-connection', 'CONNECTION'),
    blanks,
    fc.oneof(
      plainConnection,
      listedConnection,
      fc.constantFrom(
        'x,\tclose',
        'close \t',
        'close\t',
        ' close',
        'x, close  ',
        'closed',
        'clos',
        ',close,',
        'close,\tclose',
      ),
    ),
  )
  .map(([name, before, value]) => `${name}:${before}${value}\r\n`);
/** One step off: folding, blanks around the name, bare LF or CR, no colon, an empty name. */
const oddTrailer = fc.constantFrom(
  ' X: a\r\n',
  'X : a\r\n',
  ':a\r\n',
  'X: a\n',
  'X: a\rb\r\n',
  'X\r\n',
  'X: a\r\n folded\r\n',
  'X:\r\n\tb\r\n',
  'X: a\r\r\n',
);
/** Near the head's limit (MAX_HEAD_BYTES of the differential: 2048), which Node applies to trailers' names and values. */
const longTrailer = fc
  .integer({ min: 2_040, max: 2_056 })
  .map((bytes) => `X:  ${'v'.repeat(bytes - 1)} \r\n`);
const trailers = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: plainTrailer },
      { weight: 2, arbitrary: connectionTrailer },
      { weight: 2, arbitrary: oddTrailer },
      { weight: 1, arbitrary: longTrailer },
    ),
    { maxLength: 3 },
  )
  .map((lines) => lines.join(''));
/** A chunked body with extensions on its size lines and trailers after its last chunk. */
const extendedChunkedBody = fc
  .tuple(
    fc.array(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 30 }), extensions), { maxLength: 2 }),
    extensions,
    trailers,
  )
  .map(([chunks, lastExtensions, trailerLines]) => ({
    headers: 'Transfer-Encoding: chunked\r\n',
    bytes: `${chunks
      .map(
        ([data, ext]) => `${data.length.toString(16)}${ext}\r\n${Buffer.from(data).toString('latin1')}\r\n`,
      )
      .join('')}0${lastExtensions}\r\n${trailerLines}\r\n`,
  }));

export interface Request {
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
export const plainRequest = requestOf(
  fc.option(plainConnection, { nil: undefined }).map((value) => (value === undefined ? [] : [value])),
  body,
);
/** A request one step off that shape, in its Connection values or its chunks. */
export const nearMissRequest = requestOf(
  fc.oneof(
    { weight: 1, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 3,
      arbitrary: fc.array(fc.oneof(plainConnection, listedConnection), { minLength: 1, maxLength: 2 }),
    },
  ),
  fc.oneof(body, oddChunkedBody),
);

/** A request of the plain shape whose chunked body has extensions and trailers, valid or one step off. */
export const extendedRequest = requestOf(
  fc.option(plainConnection, { nil: undefined }).map((value) => (value === undefined ? [] : [value])),
  extendedChunkedBody,
);

/** Bytes parsers are known to disagree on: smuggling's raw material, put anywhere. */
export const byteEdit = fc.record({
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
export const lineEdit = fc.record({
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
    'Proxy-Connection: close',
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
export type Edit = { at: number; remove: number; insert: string } | { line: number; insert: string };

export function edited(text: string, edit: Edit): string {
  if ('at' in edit) {
    const where = edit.at % (text.length + 1);
    return text.slice(0, where) + edit.insert + text.slice(where + edit.remove);
  }
  const starts = [...text.matchAll(/\r\n/g)].map((match) => (match.index ?? 0) + 2);
  const where = starts[edit.line % starts.length] ?? 0;
  return `${text.slice(0, where)}${edit.insert}\r\n${text.slice(where)}`;
}

export function serialised(requests: Request[]): Buffer {
  return Buffer.from(`${requests.map((request) => request.text).join('')}${NEXT}`, 'latin1');
}
