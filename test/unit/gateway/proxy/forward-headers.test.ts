import {
  buildUpstreamHeaders,
  connectionNamedHeaders,
  isEndToEndHeader,
  specialHeaderName,
} from '../../../../gateway/proxy/forward-headers.js';

const forwarded = { remoteAddress: '192.0.2.10', proto: 'https', host: 'app.ns.example.com' };

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

  it("when the client sent X-Forwarded-* itself, then For is extended and Proto/Host are the gateway's own", () => {
    const headers = buildUpstreamHeaders(
      [
        'X-Forwarded-For',
        '203.0.113.1',
        'x-forwarded-for',
        '203.0.113.2',
        'X-Forwarded-Proto',
        'http',
        'X-Forwarded-Host',
        'evil',
      ],
      forwarded,
    );
    expect(headers).toEqual([
      'X-Forwarded-For',
      '203.0.113.1, 203.0.113.2, 192.0.2.10',
      'X-Forwarded-Proto',
      'https',
      'X-Forwarded-Host',
      'app.ns.example.com',
    ]);
  });
});

describe('response header filtering', () => {
  it('when a response names headers in Connection, then those and the hop-by-hop ones are not end-to-end', () => {
    const named = connectionNamedHeaders(['Connection', 'close, X-Hop', 'X-Hop', '1']);
    expect(isEndToEndHeader('x-hop', named)).toBe(false);
    expect(isEndToEndHeader('transfer-encoding', named)).toBe(false);
    expect(isEndToEndHeader('proxy-authenticate', named)).toBe(false);
    expect(isEndToEndHeader('set-cookie', named)).toBe(true);
    expect(connectionNamedHeaders(['Content-Type', 'text/plain'])).toBeUndefined();
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
