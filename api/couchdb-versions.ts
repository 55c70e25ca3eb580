/**
 * Which CouchDB releases an instance may run. Any 3.x.y release is accepted (spec.image may point at
 * a private build of one); the default is the newest 3.x release Settee is tested against.
 */

export const COUCHDB_VERSION_PATTERN = '^3\\.[0-9]+\\.[0-9]+$';
const COUCHDB_VERSION_REGEX = new RegExp(COUCHDB_VERSION_PATTERN);

export const NEWEST_SUPPORTED_COUCHDB_VERSION = '3.5.1';

/** The official image on Docker Hub. */
export const COUCHDB_IMAGE_REPOSITORY = 'couchdb';

export function isSupportedCouchDbVersion(version: string): boolean {
  return COUCHDB_VERSION_REGEX.test(version);
}

export function officialCouchDbImage(version: string): string {
  return `${COUCHDB_IMAGE_REPOSITORY}:${version}`;
}

/**
 * CouchDB 3.4 introduced `-pbkdf2:<prf>-` admin hashes (sha256 by default) and upgrades older
 * hashes on login by rewriting its ini files, which a read-only mounted file does not allow; earlier
 * 3.x releases only read the sha1 `-pbkdf2-` form.
 */
export function supportsPbkdf2Sha256(version: string): boolean {
  const minor = Number(version.split('.')[1]);
  return isSupportedCouchDbVersion(version) && minor >= 4;
}
