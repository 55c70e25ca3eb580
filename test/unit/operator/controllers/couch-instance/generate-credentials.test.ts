import { generateCredentials } from '../../../../../operator/controllers/couch-instance/generate-credentials.js';

describe('generateCredentials', () => {
  it('when generated twice, then the credentials differ and the password is URL-safe and long', () => {
    const a = generateCredentials();
    const b = generateCredentials();
    expect(a.password).not.toBe(b.password);
    expect(a.cookieSecret).not.toBe(b.cookieSecret);
    expect(a.password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.username).toMatch(/^admin-[0-9a-f]{6}$/);
  });
});
