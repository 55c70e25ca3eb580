import { authenticate } from '../../../../gateway/queue/http/auth.js';
import { UnauthorizedError } from '../../../../gateway/queue/core/errors.js';
import { buildQStashFormatToken } from '../../../../api/qstash-token.js';

const binding = (token: string) => ({ token, namespace: 'tenant-a', name: 'cache' });

describe('bearer authentication', () => {
  it('when the bearer token is the database password, then the request is let through', () => {
    expect(() => authenticate('Bearer s3cret', binding('s3cret'))).not.toThrow();
    expect(() => authenticate('bearer   s3cret', binding('s3cret'))).not.toThrow();
  });

  it("when the token is the password in QStash's format with the binding's user id, then it is let through; another user id or password is 401", () => {
    const wrapped = (userId: string, password: string) =>
      `Bearer ${buildQStashFormatToken(userId, password)}`;
    expect(() => authenticate(wrapped('tenant-a.cache', 's3cret'), binding('s3cret'))).not.toThrow();
    for (const header of [
      wrapped('tenant-b.cache', 's3cret'),
      wrapped('tenant-a.cache', 's3cret2'),
      wrapped('tenant-a.cache', ''),
      `Bearer ${Buffer.from('{"UserID": "tenant-a.cache"}').toString('base64')}`,
      `Bearer ${Buffer.from('not json').toString('base64')}`,
    ])
      expect(() => authenticate(header, binding('s3cret'))).toThrow(UnauthorizedError);
  });

  it('when the token is missing, malformed or wrong, then it is 401', () => {
    for (const header of [
      undefined,
      '',
      'Basic czNjcmV0',
      'Bearer',
      'Bearer s3cre',
      'Bearer s3cret2',
      'Bearer S3CRET',
    ]) {
      expect(() => authenticate(header, binding('s3cret'))).toThrow(UnauthorizedError);
    }
  });

  it('when the database has no password, then no token authorizes, wrapped or not', () => {
    expect(() => authenticate('Bearer ', binding(''))).toThrow(UnauthorizedError);
    expect(() => authenticate('Bearer x', binding(''))).toThrow(UnauthorizedError);
    expect(() => authenticate(`Bearer ${buildQStashFormatToken('tenant-a.cache', '')}`, binding(''))).toThrow(
      UnauthorizedError,
    );
  });

  it('when a header was accepted, then the same binding refuses a header one character off, shorter or longer', () => {
    const target = binding('s3cret');
    expect(() => authenticate('Bearer s3cret', target)).not.toThrow();
    for (const header of ['Bearer s3creT', 'Bearer s3cre', 'Bearer s3cret2', 'Bearer s3cret\0', '', 'Bearer'])
      expect(() => authenticate(header, target)).toThrow(UnauthorizedError);
    expect(() => authenticate(undefined, target)).toThrow(UnauthorizedError);
    expect(() => authenticate('Bearer s3cret', target)).not.toThrow();
  });

  it("when a binding's password changes after a header was accepted, then that header is refused and the new one let through", () => {
    const target = binding('s3cret');
    expect(() => authenticate('Bearer s3cret', target)).not.toThrow();
    target.token = 'n3w';
    expect(() => authenticate('Bearer s3cret', target)).toThrow(UnauthorizedError);
    expect(() => authenticate('Bearer n3w', target)).not.toThrow();
    target.token = '';
    expect(() => authenticate('Bearer n3w', target)).toThrow(UnauthorizedError);
  });
});
