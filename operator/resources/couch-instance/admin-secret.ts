import type { V1Secret } from '@kubernetes/client-node';
import { ADMIN_SECRET_KEYS } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { withAppliedDigest } from '../applied-digest.js';
import { couchInstanceNames } from './names.js';
import { buildOwnedMetadata } from './owned-metadata.js';

/**
 * What makes an instance's CouchDB identity: generated once, stored only in the admin Secret, and
 * never regenerated, so credentials and session cookies survive restarts and hibernation.
 */
export interface InstanceCredentials {
  username: string;
  password: string;
  /** [chttpd_auth] secret: signs session cookies. */
  cookieSecret: string;
}

/** Keys Settee keeps for itself beside the tenant-facing ones. */
export const COOKIE_SECRET_KEY = 'cookie-secret';
/** An ini file with the cookie-auth secret, mounted into CouchDB's local.d (kept out of the ConfigMap). */
export const AUTH_INI_KEY = 'settee-auth.ini';
/** The admin's PBKDF2 hash, bound to the password (admin-password-hash.ts): made once, read ever after. */
export const ADMIN_HASH_KEY = 'admin-password-hash';

export class InvalidAdminSecretError extends Error {
  readonly code = 'InvalidAdminSecret';
  constructor(
    readonly secretName: string,
    readonly missingKeys: string[],
  ) {
    super(
      `Secret ${secretName} lacks ${missingKeys.join(', ')}; restore the keys, or delete the Secret to ` +
        'generate new credentials (clients then need the new ones)',
    );
    this.name = 'InvalidAdminSecretError';
  }
}

/** `endpoint` with the credentials in its userinfo, e.g. `https://user:pass@name.ns.example.com`. */
export function buildCredentialedUrl(endpoint: string, credentials: InstanceCredentials): string {
  const userinfo = `${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}@`;
  return endpoint.replace(/^([a-z][a-z0-9+.-]*:\/\/)/i, `$1${userinfo}`);
}

export function buildAuthIni(credentials: InstanceCredentials): string {
  // The secret comes first in each section: the official image's entrypoint only adds a random
  // secret of its own when a section does not start with one. [couch_httpd_auth] is the pre-3.0 name.
  return [
    '; Written by the Settee operator; do not edit. Signs session cookies, so they survive hibernation.',
    '[chttpd_auth]',
    `secret = ${credentials.cookieSecret}`,
    '',
    '[couch_httpd_auth]',
    `secret = ${credentials.cookieSecret}`,
    '',
  ].join('\n');
}

export interface AdminSecretInput {
  instance: CouchInstance;
  credentials: InstanceCredentials;
  endpoint: string;
  /** bindAdminHash of the password's hash, kept so no reconcile hashes it again. */
  boundAdminHash: string;
}

export function buildAdminSecret({
  instance,
  credentials,
  endpoint,
  boundAdminHash,
}: AdminSecretInput): V1Secret {
  const name = instance.metadata.name ?? '';
  const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return withAppliedDigest<V1Secret>({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: buildOwnedMetadata(instance, couchInstanceNames(name).adminSecret),
    type: 'Opaque',
    data: {
      [ADMIN_SECRET_KEYS.username]: base64(credentials.username),
      [ADMIN_SECRET_KEYS.password]: base64(credentials.password),
      [ADMIN_SECRET_KEYS.url]: base64(buildCredentialedUrl(endpoint, credentials)),
      [COOKIE_SECRET_KEY]: base64(credentials.cookieSecret),
      [AUTH_INI_KEY]: base64(buildAuthIni(credentials)),
      [ADMIN_HASH_KEY]: base64(boundAdminHash),
    },
  });
}

/** The bound admin hash an existing admin Secret keeps, if any (one written before it was kept has none). */
export function readBoundAdminHash(secret: V1Secret): string | undefined {
  const value = secret.data?.[ADMIN_HASH_KEY];
  return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/** The credentials stored in an existing admin Secret; throws InvalidAdminSecretError when incomplete. */
export function readCredentials(secret: V1Secret): InstanceCredentials {
  const decode = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value ? Buffer.from(value, 'base64').toString('utf8') : undefined;
  };
  const username = decode(ADMIN_SECRET_KEYS.username);
  const password = decode(ADMIN_SECRET_KEYS.password);
  const cookieSecret = decode(COOKIE_SECRET_KEY);
  if (username && password && cookieSecret) return { username, password, cookieSecret };
  const missing = Object.entries({
    [ADMIN_SECRET_KEYS.username]: username,
    [ADMIN_SECRET_KEYS.password]: password,
    [COOKIE_SECRET_KEY]: cookieSecret,
  })
    .filter(([, value]) => !value)
    .map(([key]) => key);
  throw new InvalidAdminSecretError(secret.metadata?.name ?? '', missing);
}
