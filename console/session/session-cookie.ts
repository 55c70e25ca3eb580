import type { CookieOptions, Request, Response } from 'express';

/**
 * The session cookie. Over TLS it takes the __Host- prefix, which browsers accept only when Secure,
 * Path=/ and without Domain, so no sibling host can plant or overwrite it.
 */
export const COOKIE_NAME = 'settee-console';
export const SECURE_COOKIE_NAME = `__Host-${COOKIE_NAME}`;

function cookieName(req: Request): string {
  return req.secure ? SECURE_COOKIE_NAME : COOKIE_NAME;
}

function baseOptions(req: Request): CookieOptions {
  return { httpOnly: true, sameSite: 'strict', secure: req.secure, path: '/' };
}

/** The value of the session cookie this request carries, if any. */
export function readSessionCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  const wanted = cookieName(req);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === wanted) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function writeSessionCookie(req: Request, res: Response, sealed: string, expiresAt: number): void {
  // Express writes Max-Age in whole seconds, rounding down: round up so a 1 s session is not 0.
  const maxAge = Math.ceil(Math.max(0, expiresAt - Date.now()) / 1000) * 1000;
  res.cookie(cookieName(req), sealed, { ...baseOptions(req), maxAge });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(cookieName(req), baseOptions(req));
}
