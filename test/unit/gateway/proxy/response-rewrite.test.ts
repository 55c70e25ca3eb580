import { rewriteLocation, rewriteSetCookie } from '../../../../gateway/proxy/response-rewrite.js';

const pathForm = {
  basePath: '/db/ns/app',
  publicOrigin: 'http://127.0.0.1:8080',
  upstreamOrigin: 'http://10.0.0.7:5984',
};
const hostForm = {
  basePath: '',
  publicOrigin: 'https://app.ns.couch.example.com',
  upstreamOrigin: 'http://10.0.0.7:5984',
};

describe('rewriteLocation', () => {
  it('when the location is a path, then the instance prefix goes in front of it', () => {
    expect(rewriteLocation('/_utils/', pathForm)).toBe('/db/ns/app/_utils/');
    expect(rewriteLocation('/_utils/', hostForm)).toBe('/_utils/');
  });

  it("when the location is absolute on the instance's own address or the public host, then it points at the public endpoint", () => {
    expect(rewriteLocation('http://10.0.0.7:5984/db1/doc?rev=1', pathForm)).toBe(
      'http://127.0.0.1:8080/db/ns/app/db1/doc?rev=1',
    );
    expect(rewriteLocation('http://127.0.0.1:8080/db1/doc', pathForm)).toBe(
      'http://127.0.0.1:8080/db/ns/app/db1/doc',
    );
    expect(rewriteLocation('http://10.0.0.7:5984/db1/doc', hostForm)).toBe(
      'https://app.ns.couch.example.com/db1/doc',
    );
  });

  it('when the location is elsewhere or relative, then it is left alone', () => {
    expect(rewriteLocation('https://elsewhere.example.org/x', pathForm)).toBe(
      'https://elsewhere.example.org/x',
    );
    expect(rewriteLocation('doc2', pathForm)).toBe('doc2');
    expect(rewriteLocation('//cdn.example.org/x', pathForm)).toBe('//cdn.example.org/x');
  });

  it('when the client named no host (HTTP/1.0 without Host), then a location on the instance becomes a path under the prefix and nothing throws', () => {
    const noHost = { ...pathForm, publicOrigin: undefined };
    expect(rewriteLocation('http://10.0.0.7:5984/newdb', noHost)).toBe('/db/ns/app/newdb');
    expect(rewriteLocation('http://elsewhere.example.org/x', noHost)).toBe('http://elsewhere.example.org/x');
    expect(rewriteLocation('/newdb', noHost)).toBe('/db/ns/app/newdb');
  });

  it('when the public origin is not a URL at all, then the location is rewritten to a path instead of throwing', () => {
    const garbled = { ...pathForm, publicOrigin: 'http://' };
    expect(rewriteLocation('http://10.0.0.7:5984/x?a=1', garbled)).toBe('/db/ns/app/x?a=1');
    expect(rewriteLocation('http://a/x', garbled)).toBe('http://a/x');
  });
});

describe('rewriteSetCookie', () => {
  const basePath = '/db/ns/n';

  it('when the cookie names a path, then it is scoped under the instance prefix', () => {
    expect(rewriteSetCookie('AuthSession=abc; Version=1; Path=/; HttpOnly', '/db/ns/app')).toBe(
      'AuthSession=abc; Version=1; Path=/db/ns/app; HttpOnly',
    );
    expect(rewriteSetCookie('x=1; path=/sub', '/db/ns/app')).toBe('x=1; Path=/db/ns/app/sub');
  });

  it('when the cookie has several Path attributes, then one remains, the last (the one browsers use), under the prefix', () => {
    expect(rewriteSetCookie('Y=2; Path=/_utils;Path=/x', basePath)).toBe('Y=2; Path=/db/ns/n/x');
    expect(rewriteSetCookie('Y=2; Path=/a; Secure; PATH=/', basePath)).toBe('Y=2; Path=/db/ns/n; Secure');
  });

  it('when the Path attribute is spelt with blanks, quotes or no value, then the cookie still ends up under the prefix', () => {
    expect(rewriteSetCookie('A=1; Path =/', basePath)).toBe('A=1; Path=/db/ns/n');
    expect(rewriteSetCookie('A=1; path\t= /sub ', basePath)).toBe('A=1; Path=/db/ns/n/sub');
    expect(rewriteSetCookie('A=1; Path="/"', basePath)).toBe('A=1; Path=/db/ns/n');
    expect(rewriteSetCookie('A=1; Path', basePath)).toBe('A=1; Path=/db/ns/n');
    expect(rewriteSetCookie('A=1;Path=/', basePath)).toBe('A=1; Path=/db/ns/n');
  });

  it('when a path-form cookie has no Path, then it gets the prefix (a browser would widen it to the whole namespace)', () => {
    expect(rewriteSetCookie('AuthSession=abc; HttpOnly', basePath)).toBe(
      'AuthSession=abc; HttpOnly; Path=/db/ns/n',
    );
  });

  it('when the cookie names a Domain, then the attribute is dropped in both forms', () => {
    expect(rewriteSetCookie('X=1; Domain=.couch.test', '')).toBe('X=1');
    expect(rewriteSetCookie('X=1; domain = couch.test; Path=/; HttpOnly', '')).toBe('X=1; Path=/; HttpOnly');
    expect(rewriteSetCookie('X=1; Domain=.couch.test', basePath)).toBe('X=1; Path=/db/ns/n');
  });

  it('when the host form gets a cookie without Domain, then it is passed on exactly as sent, several paths included', () => {
    for (const cookie of [
      'AuthSession=abc; Path=/',
      'Y=2; Path=/_utils;Path=/x',
      'A=1; Path =/',
      'domainless=1',
    ]) {
      expect(rewriteSetCookie(cookie, '')).toBe(cookie);
    }
  });
});
