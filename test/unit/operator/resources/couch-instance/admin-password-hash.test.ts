import {
  adminHashSchemeFor,
  adminPasswordSalt,
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
});
