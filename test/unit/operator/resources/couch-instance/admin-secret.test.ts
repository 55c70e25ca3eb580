import { ADMIN_SECRET_KEYS } from '../../../../../api/contract.js';
import {
  AUTH_INI_KEY,
  buildAdminSecret,
  buildCredentialedUrl,
  InvalidAdminSecretError,
  readBoundAdminHash,
  readCredentials,
} from '../../../../../operator/resources/couch-instance/admin-secret.js';
import { buildTestInstance, TEST_CREDENTIALS } from './fixtures.js';

const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

describe('buildAdminSecret and readCredentials', () => {
  const endpoint = 'https://orders.tenant-a.couch.example.com';
  const boundAdminHash = 'tag -pbkdf2:sha256-derived,salt,50000';

  it('when built, then it holds username, password and the endpoint with credentials in the userinfo', () => {
    const secret = buildAdminSecret({
      instance: buildTestInstance(),
      credentials: TEST_CREDENTIALS,
      endpoint,
      boundAdminHash,
    });
    expect(secret.metadata?.name).toBe('orders-admin');
    expect(decode(secret.data?.[ADMIN_SECRET_KEYS.username])).toBe(TEST_CREDENTIALS.username);
    expect(decode(secret.data?.[ADMIN_SECRET_KEYS.password])).toBe(TEST_CREDENTIALS.password);
    expect(decode(secret.data?.[ADMIN_SECRET_KEYS.url])).toBe(
      `https://${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}@orders.tenant-a.couch.example.com`,
    );
    expect(decode(secret.data?.[AUTH_INI_KEY])).toContain(
      `[chttpd_auth]\nsecret = ${TEST_CREDENTIALS.cookieSecret}`,
    );
    expect(secret.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'CouchInstance', name: 'orders', controller: true }),
    ]);
  });

  it('when characters that are special in URLs are in the credentials, then the url escapes them', () => {
    const url = buildCredentialedUrl('http://127.0.0.1:8080/db/ns/x', {
      ...TEST_CREDENTIALS,
      password: 'a@b:c/d',
    });
    expect(new URL(url).password).toBe('a%40b%3Ac%2Fd');
    expect(url.endsWith('@127.0.0.1:8080/db/ns/x')).toBe(true);
  });

  it('when a built Secret is read back, then the same credentials come out', () => {
    const secret = buildAdminSecret({
      instance: buildTestInstance(),
      credentials: TEST_CREDENTIALS,
      endpoint,
      boundAdminHash,
    });
    expect(readCredentials(secret)).toEqual(TEST_CREDENTIALS);
    expect(readBoundAdminHash(secret)).toBe(boundAdminHash);
  });

  it('when a Secret lacks the password, then InvalidAdminSecretError names the missing key', () => {
    const secret = buildAdminSecret({
      instance: buildTestInstance(),
      credentials: TEST_CREDENTIALS,
      endpoint,
      boundAdminHash,
    });
    delete secret.data?.[ADMIN_SECRET_KEYS.password];
    expect(() => readCredentials(secret)).toThrow(InvalidAdminSecretError);
    expect(() => readCredentials(secret)).toThrow('lacks password');
  });
});
