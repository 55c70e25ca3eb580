import { rewriteLocation, rewriteSetCookiePath } from '../../../../gateway/proxy/response-rewrite.js';

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
});

describe('rewriteSetCookiePath', () => {
  it('when the cookie names a path, then it is scoped under the instance prefix', () => {
    expect(rewriteSetCookiePath('AuthSession=abc; Version=1; Path=/; HttpOnly', '/db/ns/app')).toBe(
      'AuthSession=abc; Version=1; Path=/db/ns/app; HttpOnly',
    );
    expect(rewriteSetCookiePath('x=1; path=/sub', '/db/ns/app')).toBe('x=1; Path=/db/ns/app/sub');
  });

  it('when there is no prefix or no path attribute, then the cookie is unchanged', () => {
    expect(rewriteSetCookiePath('AuthSession=abc; Path=/', '')).toBe('AuthSession=abc; Path=/');
    expect(rewriteSetCookiePath('AuthSession=abc; HttpOnly', '/db/ns/app')).toBe('AuthSession=abc; HttpOnly');
  });
});
