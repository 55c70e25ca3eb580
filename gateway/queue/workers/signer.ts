import { hash } from 'node:crypto';
import { randomBase64Url } from '../core/random-pool.js';
import { preparedHmacSha256 } from './hmac-sha256.js';

/**
 * Upstash-Signature: a JWT signed HS256 with the signing key's string as the key, carrying what
 * the @upstash/qstash Receiver checks: `iss` "Upstash", `sub` the exact destination URL, `iat` =
 * `nbf` = now, `exp` five minutes on, a unique `jti`, and `body` = base64url(SHA-256(raw body)).
 */

export const SIGNATURE_ISSUER = 'Upstash';
export const SIGNATURE_LIFETIME_SECONDS = 300;

/** Signs at once, not in a promise: an awaited sign cost every delivery a promise and an await. */
export interface DeliverySigner {
  sign(input: { destination: string; body: Buffer; now?: number }): string;
}

/** One-shot `crypto.hash`: no Hash object per delivery (see hmac-sha256.ts for why that counts). */
export function bodyDigest(body: Buffer): string {
  return hash('sha256', body, 'base64url');
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

export function createDeliverySigner(signingKey: string): DeliverySigner {
  const mac = preparedHmacSha256(Buffer.from(signingKey, 'utf8'));
  return {
    sign({ destination, body, now = Date.now() }) {
      const issuedAt = Math.floor(now / 1000);
      // The claims' JSON written as text (only the destination needs escaping): an object per
      // delivery for JSON.stringify was allocation the delivery loop pays for in GC.
      const claims =
        `{"iss":"${SIGNATURE_ISSUER}","sub":${JSON.stringify(destination)},"iat":${issuedAt},` +
        `"nbf":${issuedAt},"exp":${issuedAt + SIGNATURE_LIFETIME_SECONDS},` +
        `"jti":"jwt_${randomBase64Url(12)}","body":"${bodyDigest(body)}"}`;
      const signingInput = `${HEADER}.${Buffer.from(claims, 'utf8').toString('base64url')}`;
      return `${signingInput}.${mac(signingInput)}`;
    },
  };
}
