import crypto from 'node:crypto';

/**
 * The admin password as CouchDB's `[admins]` holds it: `-pbkdf2-<derived key>,<salt>,<iterations>`
 * (PBKDF2-SHA1, which every CouchDB 3.x and the pouchdb-server stand-in understand), with a salt
 * fixed by `identity`. CouchDB signs session cookies with the admin's salt, so an engine handed a
 * freshly salted hash at each start would void every session on each wake; the operator gives a
 * real instance a fixed hash for the same reason. Ten iterations, as the stand-in uses for the
 * passwords it hashes itself: it verifies in pure JavaScript on every request, and the engines
 * only ever listen on loopback.
 */
export function stableAdminHash(password: string, identity: string): string {
  const salt = crypto
    .createHash('sha256')
    .update(`settee-local-admin-salt:${identity}`)
    .digest('hex')
    .slice(0, 32);
  const iterations = 10;
  const key = crypto.pbkdf2Sync(password, salt, iterations, 20, 'sha1');
  return `-pbkdf2-${key.toString('hex')},${salt},${iterations}`;
}
