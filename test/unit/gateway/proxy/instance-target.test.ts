import { MalformedHostError, MalformedInstancePathError } from '../../../../gateway/http/errors.js';
import { resolveRequestTarget } from '../../../../gateway/proxy/instance-target.js';

const noDomain = { domain: undefined };
const withDomain = { domain: 'couch.example.com' };

describe('resolveRequestTarget', () => {
  it('when the path starts with /db/<ns>/<name>, then the rest of it (encoded, with the query) goes to that instance', () => {
    expect(
      resolveRequestTarget(
        { url: '/db/team-a/orders/mydb/_design%2Fx?key=%22k%22', host: '127.0.0.1:8080' },
        noDomain,
      ),
    ).toEqual({
      kind: 'instance',
      instance: { namespace: 'team-a', name: 'orders' },
      key: 'team-a/orders',
      upstreamPath: '/mydb/_design%2Fx?key=%22k%22',
      basePath: '/db/team-a/orders',
    });
  });

  it('when the path is exactly the instance base, with or without a slash or a query, then the instance gets its root', () => {
    for (const url of ['/db/ns/app', '/db/ns/app/']) {
      expect(resolveRequestTarget({ url, host: undefined }, noDomain)).toMatchObject({
        upstreamPath: '/',
        basePath: '/db/ns/app',
      });
    }
    for (const [url, upstreamPath] of [
      ['/db/ns/app?x=1', '/?x=1'],
      ['/db/ns/app/?x=1', '/?x=1'],
      ['/db/ns/app/mydb?x=/a/b', '/mydb?x=/a/b'],
    ] as const) {
      expect(resolveRequestTarget({ url, host: undefined }, noDomain)).toMatchObject({
        key: 'ns/app',
        upstreamPath,
        basePath: '/db/ns/app',
      });
    }
  });

  it('when the path form lacks a name or holds characters no instance name has, then it is a malformed path', () => {
    for (const url of [
      '/db',
      '/db/',
      '/db/ns',
      '/db/ns/',
      '/db/ns?x=/y',
      '/db/ns/?x',
      '/db/NS/app',
      '/db/ns/a%2Fb',
      '/db/ns/-app',
    ]) {
      expect(() => resolveRequestTarget({ url, host: undefined }, noDomain)).toThrow(
        MalformedInstancePathError,
      );
    }
  });

  it('when the path is not under /db/, then the request is for the gateway itself', () => {
    for (const url of ['/', '/healthz', '/metrics', '/queue/v2/publish/x', '/dbx/ns/name']) {
      expect(resolveRequestTarget({ url, host: 'localhost' }, noDomain)).toEqual({ kind: 'gateway' });
    }
  });

  it('when a domain is configured and the host is <name>.<ns>.<domain>, then every path goes to that instance unchanged', () => {
    expect(
      resolveRequestTarget({ url: '/db/x/y', host: 'orders.team-a.couch.example.com:443' }, withDomain),
    ).toEqual({
      kind: 'instance',
      instance: { namespace: 'team-a', name: 'orders' },
      key: 'team-a/orders',
      upstreamPath: '/db/x/y',
      basePath: '',
    });
    expect(
      resolveRequestTarget({ url: '/', host: 'Orders.Team-A.couch.example.com.' }, withDomain),
    ).toMatchObject({
      instance: { namespace: 'team-a', name: 'orders' },
    });
  });

  it('when the host is under the domain with the wrong number of labels, then it is a malformed host', () => {
    for (const host of [
      'orders.couch.example.com',
      'x.orders.team-a.couch.example.com',
      'a_b.ns.couch.example.com',
    ]) {
      expect(() => resolveRequestTarget({ url: '/', host }, withDomain)).toThrow(MalformedHostError);
    }
  });

  it('when the host is the domain itself or another name, then the path decides', () => {
    expect(resolveRequestTarget({ url: '/healthz', host: 'couch.example.com' }, withDomain)).toEqual({
      kind: 'gateway',
    });
    expect(resolveRequestTarget({ url: '/db/ns/app/', host: 'gateway.internal' }, withDomain)).toMatchObject({
      kind: 'instance',
    });
  });

  it('when the Host header is not a host at all, then it is a malformed host whatever the path', () => {
    for (const host of ['bad host', 'a/b', 'user@host', '[zz::1]', 'host:port']) {
      expect(() => resolveRequestTarget({ url: '/healthz', host }, noDomain)).toThrow(MalformedHostError);
    }
  });
});
