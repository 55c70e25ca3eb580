import crypto from 'node:crypto';
import { iniValue } from '../../../../local/kubelet-stand-in/engine-inputs.js';
import { stableAdminHash } from '../../../../local/kubelet-stand-in/stable-admin-hash.js';

describe('iniValue', () => {
  it('when a key is set in the section asked for, then its last value there is returned', () => {
    const ini =
      '; comment\n[couchdb]\nuuid = abc\nsingle_node = true\n[other]\nuuid = nope\n[couchdb]\nuuid = def\n';
    expect(iniValue(ini, 'couchdb', 'uuid')).toBe('def');
    expect(iniValue(ini, 'couchdb', 'missing')).toBeUndefined();
  });
});

describe('stableAdminHash', () => {
  it('when hashed twice for the same identity, then the hash is the same and verifies the password as CouchDB does', () => {
    const hash = stableAdminHash('s3cret', 'uid-1');
    expect(stableAdminHash('s3cret', 'uid-1')).toBe(hash);
    expect(stableAdminHash('s3cret', 'uid-2')).not.toBe(hash);
    const [, key, salt, iterations] = /^-pbkdf2-([0-9a-f]+),([0-9a-f]+),(\d+)$/.exec(hash) ?? [];
    expect(crypto.pbkdf2Sync('s3cret', salt ?? '', Number(iterations), 20, 'sha1').toString('hex')).toBe(key);
  });
});
