import crypto from 'node:crypto';

/**
 * CSRF defence in two layers. The session cookie is SameSite=Strict, so no other site's request
 * carries it; on top, every state-changing request must carry the session's own random token in
 * X-CSRF-Token (which only same-origin script can read, from GET /api/session) and, when the browser
 * sends one, an Origin of this very host.
 */
export const CSRF_HEADER = 'x-csrf-token';

export function newCsrfToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}

export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/** Constant-time comparison of the header with the session's token. */
export function csrfTokenMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * True when the request comes from a page of this origin: an Origin header naming this host, or
 * no Origin but Sec-Fetch-Site same-origin. Browsers send Origin on every cross-origin request and
 * on same-origin non-GET fetches, so a missing Origin alone is not trusted for a write.
 */
export function isSameOriginRequest(headers: {
  origin?: string | undefined;
  host?: string | undefined;
  secFetchSite?: string | undefined;
}): boolean {
  if (headers.origin !== undefined) {
    if (headers.origin === 'null' || headers.host === undefined) return false;
    try {
      return new URL(headers.origin).host === headers.host;
    } catch {
      return false;
    }
  }
  return headers.secFetchSite === 'same-origin';
}
