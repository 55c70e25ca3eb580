import { MalformedHostError, MalformedInstancePathError } from '../../../../gateway/http/errors.js';
import { resolveRequestTarget } from '../../../../gateway/proxy/instance-target.js';

const noDomain = { domain: undefined };

/** The patterns the checks replaced (instance-target.ts walks character codes): the reference. */
const DNS_LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
const HOST_HEADER = /^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?|\[[0-9a-f:.]+\])(:\d{1,5})?$/;
const INSTANCE_PATH = new RegExp(`^/db/${DNS_LABEL}/${DNS_LABEL}([/?]|$)`);
const DOMAIN_LABEL = new RegExp(`^${DNS_LABEL}$`);

/** Strings of 0 to `maxLength` characters of `alphabet`, from a fixed seed (mulberry32). */
function* strings(count: number, alphabet: string, maxLength: number, seed: number): Generator<string> {
  let state = seed;
  const random = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = 0; i < count; i++) {
    let text = '';
    const length = Math.floor(random() * (maxLength + 1));
    for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)];
    yield text;
  }
}

function throws(run: () => unknown, error: new (...args: never[]) => Error): boolean {
  try {
    run();
    return false;
  } catch (err) {
    if (err instanceof error) return true;
    throw err;
  }
}
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
    for (const host of ['bad host', 'a/b', 'user@host', '[zz::1]', 'host:port', 'h:123456', '[::1]:123456']) {
      expect(() => resolveRequestTarget({ url: '/healthz', host }, noDomain)).toThrow(MalformedHostError);
    }
  });

  it('when Host headers and paths are generated, then each is refused exactly when the reference pattern refuses it', () => {
    const mismatches: string[] = [];
    let hostsTaken = 0;
    const hosts = [...strings(10_000, 'aZ09_.-:[]f/@ ', 9, 1), ...strings(5_000, '[]0aFg:.', 7, 4)];
    for (const host of hosts) {
      const refused = throws(() => resolveRequestTarget({ url: '/', host }, noDomain), MalformedHostError);
      if (refused !== !HOST_HEADER.test(host.toLowerCase())) mismatches.push(host);
      if (!refused) hostsTaken += 1;
    }
    let pathsTaken = 0;
    const names = [...strings(10_000, 'ab09-/?A_.', 5, 5)];
    for (const [i, rest] of [...strings(10_000, 'ab09-/?A_.', 9, 2)].entries()) {
      const url = `/db/${rest}/${names[i] ?? ''}`;
      const refused = throws(
        () => resolveRequestTarget({ url, host: undefined }, noDomain),
        MalformedInstancePathError,
      );
      if (refused !== !INSTANCE_PATH.test(url)) mismatches.push(url);
      if (!refused) pathsTaken += 1;
    }
    for (const labels of strings(10_000, 'ab09-._', 7, 3)) {
      const host = `${labels}.couch.example.com`;
      const [name = '', namespace = '', more] = labels.split('.');
      const valid = more === undefined && DOMAIN_LABEL.test(name) && DOMAIN_LABEL.test(namespace);
      if (!HOST_HEADER.test(host)) continue;
      const refused = throws(() => resolveRequestTarget({ url: '/', host }, withDomain), MalformedHostError);
      if (refused !== !valid) mismatches.push(host);
    }
    expect(mismatches).toEqual([]);
    // Both languages are reached, not only refusals.
    expect(hostsTaken).toBeGreaterThan(500);
    expect(pathsTaken).toBeGreaterThan(100);
    for (const host of ['h:12345', '[::1]:12345', 'h.', '_'])
      expect(resolveRequestTarget({ url: '/', host }, noDomain)).toEqual({ kind: 'gateway' });
    // Labels at the length limit: 63 characters taken, 64 refused.
    const label = (n: number): string => 'a'.repeat(n);
    expect(
      resolveRequestTarget({ url: `/db/${label(63)}/${label(63)}`, host: undefined }, noDomain),
    ).toMatchObject({
      key: `${label(63)}/${label(63)}`,
    });
    expect(() => resolveRequestTarget({ url: `/db/${label(64)}/a`, host: undefined }, noDomain)).toThrow(
      MalformedInstancePathError,
    );
  });
});
