import {
  adminHashSchemeFor,
  adminPasswordSalt,
  bindAdminHash,
  boundAdminHashFor,
  computeAdminPasswordHash,
} from '../../../../../operator/resources/couch-instance/admin-password-hash.js';

describe('admin password hashes', () => {
  it('when hashed with the sha1 scheme, then the result equals an independent CouchDB-compatible hash', async () => {
    // Vector from the couch-hash-pwd package's documentation ("mysecret", 10 iterations).
    const hash = await computeAdminPasswordHash({
      password: 'mysecret',
      salt: '88b2a6274f9ebeb3e2928a86382590ec',
      scheme: { ...adminHashSchemeFor('3.3.3'), iterations: 10 },
    });
    expect(hash).toBe('-pbkdf2-515d6a879832819863e12475ad0bb6f03abb7f8e,88b2a6274f9ebeb3e2928a86382590ec,10');
  });

  it('when the version is 3.4 or later, then the sha256 scheme CouchDB 3.4 introduced is used', () => {
    expect(adminHashSchemeFor('3.4.0')).toMatchObject({ prefix: '-pbkdf2:sha256-', digest: 'sha256' });
    expect(adminHashSchemeFor('3.3.3')).toMatchObject({ prefix: '-pbkdf2-', digest: 'sha1' });
  });

  it('when the same instance is hashed twice, then the salt and so the hash are the same', async () => {
    const scheme = adminHashSchemeFor('3.5.1');
    const salt = adminPasswordSalt('uid-1');
    expect(salt).toMatch(/^[0-9a-f]{32}$/);
    expect(adminPasswordSalt('uid-2')).not.toBe(salt);
    const [a, b] = await Promise.all([
      computeAdminPasswordHash({ password: 'p', salt, scheme }),
      computeAdminPasswordHash({ password: 'p', salt, scheme }),
    ]);
    expect(a).toBe(b);
    expect(a).toMatch(/^-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},50000$/);
  });

  it('when a kept hash was made from the same password, salt and scheme, then it is used without hashing again', async () => {
    const scheme = { ...adminHashSchemeFor('3.5.2'), iterations: 10 };
    const salt = adminPasswordSalt('uid-1');
    const hash = await computeAdminPasswordHash({ password: 'p', salt, scheme });
    const bound = bindAdminHash(hash, 'p');
    expect(boundAdminHashFor(bound, { password: 'p', salt, scheme })).toBe(hash);
  });

  it('when the password, salt or scheme changed since the hash was kept, then it is not used', async () => {
    const scheme = { ...adminHashSchemeFor('3.5.2'), iterations: 10 };
    const salt = adminPasswordSalt('uid-1');
    const bound = bindAdminHash(await computeAdminPasswordHash({ password: 'p', salt, scheme }), 'p');
    expect(boundAdminHashFor(bound, { password: 'edited', salt, scheme })).toBeUndefined();
    expect(
      boundAdminHashFor(bound, { password: 'p', salt: adminPasswordSalt('uid-2'), scheme }),
    ).toBeUndefined();
    expect(
      boundAdminHashFor(bound, { password: 'p', salt, scheme: { ...scheme, iterations: 11 } }),
    ).toBeUndefined();
    const sha1 = { ...adminHashSchemeFor('3.3.3'), iterations: 10 };
    expect(boundAdminHashFor(bound, { password: 'p', salt, scheme: sha1 })).toBeUndefined();
  });

  it('when the kept value is missing, malformed or its tag does not match, then it is not used', async () => {
    const scheme = { ...adminHashSchemeFor('3.5.2'), iterations: 10 };
    const salt = adminPasswordSalt('uid-1');
    const hash = await computeAdminPasswordHash({ password: 'p', salt, scheme });
    const [tag] = bindAdminHash(hash, 'p').split(' ');
    const input = { password: 'p', salt, scheme };
    expect(boundAdminHashFor(undefined, input)).toBeUndefined();
    expect(boundAdminHashFor(hash, input)).toBeUndefined();
    expect(boundAdminHashFor(`${tag} ${hash} extra`, input)).toBeUndefined();
    expect(boundAdminHashFor(`${'0'.repeat(64)} ${hash}`, input)).toBeUndefined();
    // A tag that fits a hash of another shape (a derived key cut short) is refused by its shape.
    const short = hash.replace(/-([0-9a-f]{64}),/, (_, key: string) => `-${key.slice(2)},`);
    expect(boundAdminHashFor(bindAdminHash(short, 'p'), input)).toBeUndefined();
  });
});
