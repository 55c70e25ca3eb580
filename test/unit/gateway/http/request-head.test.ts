import http from 'node:http';
import net from 'node:net';
import { MalformedHostError } from '../../../../gateway/http/errors.js';
import { normaliseRequestHead } from '../../../../gateway/http/request-head.js';

/**
 * A real IncomingMessage as node:http's parser leaves it, on an unconnected socket: the target,
 * the raw headers, and the headers object (the first of a repeated header wins, as in Node).
 */
function incoming(url: string, rawHeaders: string[]): http.IncomingMessage {
  const req = new http.IncomingMessage(new net.Socket());
  req.url = url;
  req.rawHeaders = rawHeaders;
  const headers: http.IncomingHttpHeaders = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    headers[name] ??= rawHeaders[i + 1];
  }
  req.headers = headers;
  return req;
}

describe('normaliseRequestHead', () => {
  it('when a request is in origin form with one Host, then it is left as it came', () => {
    const req = incoming('/db/ns/app/x?y=1', ['Host', 'gw:8080', 'Accept', '*/*']);
    normaliseRequestHead(req);
    expect(req.url).toBe('/db/ns/app/x?y=1');
    expect(req.headers.host).toBe('gw:8080');
  });

  it('when the Host header comes twice, in any spelling, then it is a malformed host', () => {
    for (const rawHeaders of [
      ['Host', 'a.x', 'Host', 'b.y'],
      ['host', 'a.x', 'Accept', '*/*', 'HOST', 'a.x'],
    ]) {
      expect(() => normaliseRequestHead(incoming('/', rawHeaders))).toThrow(MalformedHostError);
    }
    expect(() => normaliseRequestHead(incoming('/', ['Host', 'a.x', 'Host', 'b.y']))).toThrow(
      'the Host header "a.x, b.y" is sent more than once',
    );
  });

  it('when the target is in absolute form, then its path and query become the URL and its authority the one Host', () => {
    const req = incoming('http://app.ns.couch.test:8080/db1/doc?rev=1', [
      'Host',
      'other.example',
      'Accept',
      '*/*',
    ]);
    normaliseRequestHead(req);
    expect(req.url).toBe('/db1/doc?rev=1');
    expect(req.headers.host).toBe('app.ns.couch.test:8080');
    expect(req.rawHeaders).toEqual(['Host', 'app.ns.couch.test:8080', 'Accept', '*/*']);
  });

  it('when an absolute-form target has no path or only a query, and no Host header came, then the path is / and the Host is added', () => {
    const bare = incoming('HTTPS://gw', []);
    normaliseRequestHead(bare);
    expect(bare.url).toBe('/');
    expect(bare.rawHeaders).toEqual(['Host', 'gw']);
    expect(bare.headers.host).toBe('gw');
    const query = incoming('http://gw?x=1', []);
    normaliseRequestHead(query);
    expect(query.url).toBe('/?x=1');
  });

  it('when the target is neither origin nor absolute form, then it is left for the gateway to refuse', () => {
    for (const url of ['*', 'db/ns/app/', 'ftp://gw/x']) {
      const req = incoming(url, ['Host', 'gw']);
      normaliseRequestHead(req);
      expect(req.url).toBe(url);
      expect(req.headers.host).toBe('gw');
    }
  });
});
