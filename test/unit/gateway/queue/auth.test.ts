import { authenticate } from '../../../../gateway/queue/http/auth.js';
import { UnauthorizedError } from '../../../../gateway/queue/core/errors.js';

describe('bearer authentication', () => {
  it('when the bearer token is the database password, then the request is let through', () => {
    expect(() => authenticate('Bearer s3cret', 's3cret')).not.toThrow();
    expect(() => authenticate('bearer   s3cret', 's3cret')).not.toThrow();
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
      expect(() => authenticate(header, 's3cret')).toThrow(UnauthorizedError);
    }
  });

  it('when the database has no password, then no token authorizes', () => {
    expect(() => authenticate('Bearer ', '')).toThrow(UnauthorizedError);
    expect(() => authenticate('Bearer x', '')).toThrow(UnauthorizedError);
  });
});
