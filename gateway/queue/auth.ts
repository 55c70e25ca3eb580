import { hash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from './errors.js';

const BEARER = /^Bearer\s+(.+)$/i;

function digest(value: string): Buffer {
  // The one-shot hash: a Hash object per call costs more than the digest on the publish path.
  return hash('sha256', value, 'buffer');
}

/**
 * Checks `Authorization: Bearer <token>` against the binding's database password. Both sides are
 * hashed first so the comparison takes the same time whatever the length or content of the guess;
 * an empty password never authorizes anything.
 */
export function authenticate(authorization: string | undefined, expectedToken: string): void {
  const match = authorization === undefined ? null : BEARER.exec(authorization.trim());
  if (!match) throw new UnauthorizedError('missing bearer token: send Authorization: Bearer <VQUEUE_TOKEN>');
  const matches = timingSafeEqual(digest(match[1]!), digest(expectedToken));
  if (!matches || expectedToken.length === 0) throw new UnauthorizedError('invalid token');
}
