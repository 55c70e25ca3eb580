import crypto from 'node:crypto';
import type { InstanceCredentials } from '../../resources/couch-instance/admin-secret.js';

/**
 * Fresh credentials from the operating system's CSPRNG. Called only when an instance has no admin
 * Secret yet; the result is written once and read back ever after, never regenerated.
 */
export function generateCredentials(
  randomBytes: (size: number) => Buffer = crypto.randomBytes,
): InstanceCredentials {
  return {
    username: `admin-${randomBytes(3).toString('hex')}`,
    // base64url needs no escaping in the userinfo of the Secret's url.
    password: randomBytes(24).toString('base64url'),
    cookieSecret: randomBytes(32).toString('hex'),
  };
}
