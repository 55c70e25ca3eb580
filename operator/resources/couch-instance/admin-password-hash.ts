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

/**
 * The iterations are a floor, not a tuning knob: they are what an offline guess at the password
 * costs anyone who reads the hash (the ConfigMap holding it is often readable more widely than the
 * Secret), and the ini pins them, so CouchDB hashes the tenant's `_users` passwords with the same
 * count. CouchDB 3.5.2's own default is 600,000 sha256 (couch_passwords:hash_admin_password); ours
 * is below it (50,000, chosen for the first authenticated request after each wake,
 * docs/cold-start.md), so it must not drop further. The hash is made once per password and kept in
 * the admin Secret (bindAdminHash).
 */
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

/**
 * The hash as the admin Secret keeps it: behind an HMAC of it keyed by the password, so a reconcile
 * (after an operator restart too) can tell in microseconds that the kept hash was made from the
 * Secret's password without running PBKDF2 again. The Secret holds the password itself, so the tag
 * tells no reader of it anything more.
 */
export function bindAdminHash(hash: string, password: string): string {
  return `${hashTag(hash, password)} ${hash}`;
}

/**
 * The hash a bound value (bindAdminHash) holds when it is the one computeAdminPasswordHash would
 * make from `password`, `salt` and `scheme`; undefined when any of them changed (a password edited
 * in the Secret, another version's scheme) or the value is not one of ours.
 */
export function boundAdminHashFor(
  bound: string | undefined,
  input: { password: string; salt: string; scheme: AdminHashScheme },
): string | undefined {
  const [tag, hash, extra] = (bound ?? '').split(' ');
  if (tag === undefined || hash === undefined || extra !== undefined) return undefined;
  const { scheme } = input;
  const suffix = `,${input.salt},${scheme.iterations}`;
  if (!hash.startsWith(scheme.prefix) || !hash.endsWith(suffix)) return undefined;
  const derived = hash.slice(scheme.prefix.length, hash.length - suffix.length);
  if (!new RegExp(`^[0-9a-f]{${scheme.keyLength * 2}}$`).test(derived)) return undefined;
  const expected = Buffer.from(hashTag(hash, input.password), 'hex');
  const given = Buffer.from(tag, 'hex');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? hash : undefined;
}

function hashTag(hash: string, password: string): string {
  return crypto.createHmac('sha256', password).update(hash).digest('hex');
}
