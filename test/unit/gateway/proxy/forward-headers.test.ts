import {
  buildClientHeaders,
  buildUpstreamHeaders,
  specialHeaderName,
  type ResponseHeaderRewrites,
} from '../../../../gateway/proxy/forward-headers.js';

const forwarded = {
  remoteAddress: '192.0.2.10',
  proto: 'https',
  host: 'app.ns.example.com',
  fromTrustedProxy: false,
};

describe('buildUpstreamHeaders', () => {
  it('when hop-by-hop headers and headers named by Connection are present, then they are dropped and the rest keep order and case', () => {
    const headers = buildUpstreamHeaders(
      [
        'Host',
        'app.ns.example.com',
        'Connection',
        'keep-alive, X-Private',
        'X-Private',
        'p',
        'Keep-Alive',
        'timeout=5',
        'Transfer-Encoding',
        'chunked',
        'TE',
        'trailers',
        'Upgrade',
        'h2c',
        'Proxy-Authorization',
        'Basic eA==',
        'Expect',
        '100-continue',
        'Authorization',
        'Basic YTpi',
        'Content-Type',
        'application/json',
      ],
      forwarded,
    );
    expect(headers).toEqual([
      'Host',
      'app.ns.example.com',
      'Authorization',
      'Basic YTpi',
      'Content-Type',
      'application/json',
      'X-Forwarded-For',
      '192.0.2.10',
      'X-Forwarded-Proto',
      'https',
      'X-Forwarded-Host',
      'app.ns.example.com',
    ]);
  });

  const sentByPeer = [
    'X-Forwarded-For',
    '203.0.113.1',
    'x-forwarded-for',
    '203.0.113.2',
    'X-Forwarded-Proto',
    'http',
    'X-Forwarded-Host',
    'evil',
  ];

  it("when an untrusted peer sent X-Forwarded-* itself, then its For chain is dropped and Proto/Host are the gateway's own", () => {
    expect(buildUpstreamHeaders(sentByPeer, forwarded)).toEqual([
      'X-Forwarded-For',
      '192.0.2.10',
      'X-Forwarded-Proto',
      'https',
      'X-Forwarded-Host',
      'app.ns.example.com',
    ]);
  });

  it('when a trusted proxy sent X-Forwarded-For, then its chain is kept and extended by the peer', () => {
    expect(buildUpstreamHeaders(sentByPeer, { ...forwarded, fromTrustedProxy: true })).toEqual([
      'X-Forwarded-For',
      '203.0.113.1, 203.0.113.2, 192.0.2.10',
      'X-Forwarded-Proto',
      'https',
      'X-Forwarded-Host',
      'app.ns.example.com',
    ]);
  });
});

describe('buildClientHeaders', () => {
  const raw = (...items: string[]) => items.map((item) => Buffer.from(item, 'latin1'));
  const rewrites: ResponseHeaderRewrites = {
    locationForClient: (location) => `/db/ns/app${location}`,
    setCookieForClient: (cookie) => `${cookie}; rewritten`,
  };

  it('when a response names headers in Connection, then those and the hop-by-hop ones are dropped and the rest keep order', () => {
    const headers = buildClientHeaders(
      raw(
        'X-Hop',
        '1',
        'Content-Type',
        'application/json',
        'Connection',
        'close, X-Hop',
        'Transfer-Encoding',
        'chunked',
        'Proxy-Authenticate',
        'Basic',
        'Keep-Alive',
        'timeout=5',
        'ETag',
        '"1-a"',
      ),
      rewrites,
      undefined,
    );
    expect(headers).toEqual(['Content-Type', 'application/json', 'ETag', '"1-a"']);
  });

  it('when a response carries Location and Set-Cookie, then both are rewritten and the extra headers come last', () => {
    const headers = buildClientHeaders(
      raw('Location', '/mydb/doc', 'Set-Cookie', 'AuthSession=x; Path=/', 'Connection', 'Keep-Alive'),
      rewrites,
      ['X-Settee-Cold-Start', '120'],
    );
    expect(headers).toEqual([
      'Location',
      '/db/ns/app/mydb/doc',
      'Set-Cookie',
      'AuthSession=x; Path=/; rewritten',
      'X-Settee-Cold-Start',
      '120',
    ]);
  });

  it('when a header value holds bytes beyond ASCII, then they pass through unchanged', () => {
    const value = Buffer.from([0x61, 0xe9, 0xff]);
    const [, passed] = buildClientHeaders([Buffer.from('X-Name'), value], rewrites, undefined);
    expect(Buffer.from(passed ?? '', 'latin1')).toEqual(value);
  });
});

describe('specialHeaderName', () => {
  it('when a name is a special one in any case, then its lower-case form is returned, and otherwise undefined', () => {
    expect(specialHeaderName('Transfer-Encoding')).toBe('transfer-encoding');
    expect(specialHeaderName('X-FORWARDED-FOR')).toBe('x-forwarded-for');
    expect(specialHeaderName('Set-Cookie')).toBe('set-cookie');
    expect(specialHeaderName('Location')).toBe('location');
    // Same length as special names (expect, connection), but not one of them.
    expect(specialHeaderName('Accept')).toBeUndefined();
    expect(specialHeaderName('User-Agent')).toBeUndefined();
    expect(specialHeaderName('Content-Type')).toBeUndefined();
  });
});
