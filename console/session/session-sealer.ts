import crypto from 'node:crypto';
import { EncryptJWT, jwtDecrypt, errors as joseErrors } from 'jose';

/** What the console remembers of a signed-in user, inside the encrypted cookie only. */
export interface Session {
  /** Random id: live-update streams are counted per session. */
  id: string;
  /** The user's own bearer token; every API call for them is made with it. Never logged. */
  token: string;
  /** The user as the API server's TokenReview named them. */
  username: string;
  /** The namespace the console shows (a ServiceAccount's own, or the one the user chose). */
  namespace: string;
  /** Sent back in X-CSRF-Token on every state-changing request. */
  csrfToken: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** Why a cookie did not open into a session; the sign-in page says which. */
export type SessionEndReason = 'expired' | 'invalid';

export class SessionUnreadableError extends Error {
  readonly code = 'SESSION_UNREADABLE';
  constructor(
    readonly reason: SessionEndReason,
    options?: { cause?: unknown },
  ) {
    super(reason === 'expired' ? 'the session has expired' : 'the session cookie cannot be read', options);
    this.name = 'SessionUnreadableError';
  }
}

interface SessionClaims {
  sid: string;
  tok: string;
  usr: string;
  ns: string;
  csrf: string;
}

/**
 * Seals sessions into compact JWE (dir + A256GCM): the browser holds them, cannot read or change
 * them, and the server keeps no session store, so memory per session is only its open streams.
 */
export class SessionSealer {
  constructor(private readonly key: Uint8Array) {}

  async seal(session: Session): Promise<string> {
    const claims: SessionClaims = {
      sid: session.id,
      tok: session.token,
      usr: session.username,
      ns: session.namespace,
      csrf: session.csrfToken,
    };
    return new EncryptJWT({ ...claims })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(Math.floor(session.expiresAt / 1000))
      .encrypt(this.key);
  }

  async open(sealed: string, now = Date.now()): Promise<Session> {
    try {
      const { payload } = await jwtDecrypt<SessionClaims>(sealed, this.key, {
        currentDate: new Date(now),
        clockTolerance: 0,
      });
      const { sid, tok, usr, ns, csrf, exp } = payload;
      if (![sid, tok, usr, ns, csrf].every((v) => typeof v === 'string') || typeof exp !== 'number')
        throw new SessionUnreadableError('invalid');
      return { id: sid, token: tok, username: usr, namespace: ns, csrfToken: csrf, expiresAt: exp * 1000 };
    } catch (err) {
      if (err instanceof SessionUnreadableError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new SessionUnreadableError('expired', { cause: err });
      throw new SessionUnreadableError('invalid', { cause: err });
    }
  }
}

export function newSessionId(): string {
  return crypto.randomBytes(16).toString('base64url');
}
