import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { CsrfError, NotSignedInError } from '../http/errors.js';
import { CSRF_HEADER, csrfTokenMatches, isSafeMethod, isSameOriginRequest } from './csrf.js';
import { readSessionCookie } from './session-cookie.js';
import { SessionUnreadableError, type Session, type SessionSealer } from './session-sealer.js';

/** The signed-in user's session, set by requireSession. */
export function sessionOf(res: Response): Session {
  const session = res.locals.session as Session | undefined;
  if (!session) throw new NotSignedInError('signed-out');
  return session;
}

/** Rejects a write that did not come from a console page of this origin. */
export function requireSameOrigin(req: Request): void {
  if (isSafeMethod(req.method)) return;
  const sameOrigin = isSameOriginRequest({
    origin: req.headers.origin,
    host: req.headers.host,
    secFetchSite: req.get('sec-fetch-site'),
  });
  if (!sameOrigin) throw new CsrfError();
}

/**
 * Opens the session cookie (401 with the reason when there is none or it expired) and, on every
 * state-changing method, checks the origin and the session's CSRF token.
 */
export function requireSession(sealer: SessionSealer): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const sealed = readSessionCookie(req);
    if (!sealed) throw new NotSignedInError('signed-out');
    let session: Session;
    try {
      session = await sealer.open(sealed);
    } catch (err) {
      if (err instanceof SessionUnreadableError) throw new NotSignedInError(err.reason);
      throw err;
    }
    if (!isSafeMethod(req.method)) {
      requireSameOrigin(req);
      if (!csrfTokenMatches(session.csrfToken, req.get(CSRF_HEADER))) throw new CsrfError();
    }
    res.locals.session = session;
    next();
  };
}
