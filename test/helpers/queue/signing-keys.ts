import { randomBytes } from 'node:crypto';

/** A key in QStash's shape, for tests that need one without the operator. */
export function randomSigningKey(): string {
  return `sig_${randomBytes(21).toString('base64url').replace(/[-_]/g, 'x')}`;
}
