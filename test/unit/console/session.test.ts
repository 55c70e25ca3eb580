import {
  SessionSealer,
  SessionUnreadableError,
  type Session,
} from '../../../console/session/session-sealer.js';
import {
  csrfTokenMatches,
  isSafeMethod,
  isSameOriginRequest,
  newCsrfToken,
} from '../../../console/session/csrf.js';
import { serviceAccountNamespace, tokenExpiry } from '../../../console/kube/token-review.js';

const key = new Uint8Array(32).fill(1);
const session = (expiresAt: number): Session => ({
  id: 'sid',
  token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
  username: 'system:serviceaccount:team-a:alice',
  namespace: 'team-a',
  csrfToken: 'csrf-token',
  expiresAt,
});

describe('the sealed session', () => {
  const sealer = new SessionSealer(key);
  const inAnHour = Math.floor(Date.now() / 1000) * 1000 + 3_600_000;

  it('when a session is sealed and opened, then it comes back whole and the token is not readable in the cookie', async () => {
    const sealed = await sealer.seal(session(inAnHour));
    expect(sealed.split('.')).toHaveLength(5); // compact JWE
    expect(sealed).not.toContain('alice');
    expect(Buffer.from(sealed.split('.').join(''), 'base64url').toString('latin1')).not.toContain('team-a');
    expect(await sealer.open(sealed)).toEqual(session(inAnHour));
  });

  it('when the session is past its expiry, then opening it fails as expired', async () => {
    const sealed = await sealer.seal(session(inAnHour));
    await expect(sealer.open(sealed, inAnHour + 1_000)).rejects.toMatchObject({ reason: 'expired' });
  });

  it('when one byte of the ciphertext changes, or another key opens it, then it fails as invalid', async () => {
    const sealed = await sealer.seal(session(inAnHour));
    const parts = sealed.split('.');
    const body = parts[3] ?? '';
    parts[3] = (body[0] === 'A' ? 'B' : 'A') + body.slice(1);
    await expect(sealer.open(parts.join('.'))).rejects.toBeInstanceOf(SessionUnreadableError);
    await expect(new SessionSealer(new Uint8Array(32).fill(2)).open(sealed)).rejects.toMatchObject({
      reason: 'invalid',
    });
    await expect(sealer.open('not-a-jwe')).rejects.toMatchObject({ reason: 'invalid' });
  });
});

describe('CSRF checks', () => {
  it('when the CSRF header matches the session token exactly, then it passes; any other value or none fails', () => {
    const token = newCsrfToken();
    expect(csrfTokenMatches(token, token)).toBe(true);
    expect(csrfTokenMatches(token, `${token}x`)).toBe(false);
    expect(csrfTokenMatches(token, token.slice(1))).toBe(false);
    expect(csrfTokenMatches(token, undefined)).toBe(false);
    expect(newCsrfToken()).not.toBe(token);
  });

  it('when Origin names this host, then the request is same-origin; another host, "null" or a malformed Origin is not', () => {
    expect(isSameOriginRequest({ origin: 'https://console.example.com', host: 'console.example.com' })).toBe(
      true,
    );
    expect(isSameOriginRequest({ origin: 'http://127.0.0.1:8090', host: '127.0.0.1:8090' })).toBe(true);
    expect(isSameOriginRequest({ origin: 'https://evil.example', host: 'console.example.com' })).toBe(false);
    expect(
      isSameOriginRequest({
        origin: 'https://console.example.com.evil.example',
        host: 'console.example.com',
      }),
    ).toBe(false);
    expect(isSameOriginRequest({ origin: 'null', host: 'console.example.com' })).toBe(false);
    expect(isSameOriginRequest({ origin: '::', host: 'console.example.com' })).toBe(false);
  });

  it('when there is no Origin, then only Sec-Fetch-Site: same-origin counts as same-origin', () => {
    expect(isSameOriginRequest({ host: 'h', secFetchSite: 'same-origin' })).toBe(true);
    expect(isSameOriginRequest({ host: 'h', secFetchSite: 'cross-site' })).toBe(false);
    expect(isSameOriginRequest({ host: 'h' })).toBe(false);
  });

  it('when the method is GET, HEAD or OPTIONS, then it is safe; every other method is state-changing', () => {
    expect(['GET', 'HEAD', 'OPTIONS'].map(isSafeMethod)).toEqual([true, true, true]);
    expect(['POST', 'PUT', 'PATCH', 'DELETE'].map(isSafeMethod)).toEqual([false, false, false, false]);
  });
});

describe('reading a reviewed token', () => {
  const jwt = (payload: object): string =>
    `h.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.s`;

  it('when a token is a JWT with exp, then its expiry is read in ms; otherwise there is none', () => {
    expect(tokenExpiry(jwt({ exp: 1_800_000_000 }))).toBe(1_800_000_000_000);
    expect(tokenExpiry(jwt({ sub: 'x' }))).toBeUndefined();
    expect(tokenExpiry('opaque-token')).toBeUndefined();
    expect(tokenExpiry('a.%%%.c')).toBeUndefined();
  });

  it("when the user is a ServiceAccount, then its namespace is the session's; other users have none", () => {
    expect(serviceAccountNamespace('system:serviceaccount:team-a:alice')).toBe('team-a');
    expect(serviceAccountNamespace('alice@example.com')).toBeUndefined();
    expect(serviceAccountNamespace('system:serviceaccount:Bad_NS:alice')).toBeUndefined();
  });
});
