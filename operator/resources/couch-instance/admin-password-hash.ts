import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { supportsPbkdf2Sha256 } from '../../../api/couchdb-versions.js';

const pbkdf2 = promisify(crypto.pbkdf2);

/** How CouchDB `version` hashes admin passwords; the ini pins the same values so it never re-hashes. */
export interface AdminHashScheme {
  /** The hash's prefix in [admins]: `-pbkdf2:sha256-` (3.4+) or `-pbkdf2-` (sha1, every 3.x). */
  prefix: string;
  digest: 'sha256' | 'sha1';
  iterations: number;
  keyLength: number;
}

export function adminHashSchemeFor(version: string): AdminHashScheme {
  return supportsPbkdf2Sha256(version)
    ? { prefix: '-pbkdf2:sha256-', digest: 'sha256', iterations: 50_000, keyLength: 32 }
    : { prefix: '-pbkdf2-', digest: 'sha1', iterations: 10_000, keyLength: 20 };
}

/**
 * A salt fixed for the instance's lifetime (its UID does not change), so the same password always
 * hashes to the same [admins] line and the ConfigMap does not change from one reconcile to the next.
 */
export function adminPasswordSalt(instanceUid: string): string {
  return crypto.createHash('sha256').update(`settee-admin-salt:${instanceUid}`).digest('hex').slice(0, 32);
}

/**
 * The [admins] value CouchDB verifies the password against, in CouchDB's own format:
 * `<prefix><derived key hex>,<salt>,<iterations>`. Runs on libuv's thread pool: it is deliberately slow.
 */
export async function computeAdminPasswordHash(input: {
  password: string;
  salt: string;
  scheme: AdminHashScheme;
}): Promise<string> {
  const { password, salt, scheme } = input;
  const key = await pbkdf2(password, salt, scheme.iterations, scheme.keyLength, scheme.digest);
  return `${scheme.prefix}${key.toString('hex')},${salt},${scheme.iterations}`;
}
