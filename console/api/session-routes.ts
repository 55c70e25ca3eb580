import express, { type Request, type Response, type Router } from 'express';
import type winston from 'winston';
import { BadInputError, NamespaceNotReachableError, SignInRefusedError } from '../http/errors.js';
import { listReachableNamespaces, reviewNamespace } from '../kube/namespace-access.js';
import { reviewToken, serviceAccountNamespace, tokenExpiry } from '../kube/token-review.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { newCsrfToken } from '../session/csrf.js';
import { clearSessionCookie, writeSessionCookie } from '../session/session-cookie.js';
import { requireSameOrigin, requireSession, sessionOf } from '../session/session-middleware.js';
import { newSessionId, type Session, type SessionSealer } from '../session/session-sealer.js';
import { checkNamespace } from './names.js';

/** What GET /api/session and a sign-in answer: never the token. */
export interface SessionView {
  username: string;
  namespace: string;
  csrfToken: string;
  expiresAt: string;
}

const MAX_TOKEN_LENGTH = 16_384;

function viewOf(session: Session): SessionView {
  return {
    username: session.username,
    namespace: session.namespace,
    csrfToken: session.csrfToken,
    expiresAt: new Date(session.expiresAt).toISOString(),
  };
}

/**
 * POST /api/session signs in with a bearer token (TokenReview), GET says who is signed in,
 * DELETE signs out. The token goes only into the encrypted cookie; logs name the user, never it.
 */
export function sessionRoutes(options: {
  kube: KubeHttp;
  sealer: SessionSealer;
  sessionTtlMs: number;
  logger: winston.Logger;
}): Router {
  const router = express.Router();

  router.post('/', async (req: Request, res: Response) => {
    requireSameOrigin(req);
    const body = (req.body ?? {}) as { token?: unknown; namespace?: unknown };
    const token = typeof body.token === 'string' ? body.token.trim() : '';
    if (token === '' || token.length > MAX_TOKEN_LENGTH || /\s/.test(token))
      throw new BadInputError(
        'Paste a Kubernetes bearer token (a ServiceAccount token or an OIDC ID token).',
        {
          token: 'a bearer token, without spaces',
        },
      );
    const review = await reviewToken(options.kube, token);
    if (!review.authenticated) {
      options.logger.info('sign-in refused', { reason: review.error });
      throw new SignInRefusedError(`The Kubernetes API server refused this token: ${review.error}`);
    }
    const chosen =
      typeof body.namespace === 'string' && body.namespace.trim() !== '' ? body.namespace.trim() : undefined;
    const namespace = chosen ?? serviceAccountNamespace(review.user.username);
    if (namespace === undefined)
      throw new BadInputError("This token is not a ServiceAccount's: name the namespace to open.", {
        namespace: 'required for this user',
      });
    const now = Date.now();
    // Whole seconds, as the sealed session's `exp` claim holds it.
    const expiresAt =
      Math.floor(
        Math.min(now + options.sessionTtlMs, tokenExpiry(token) ?? Number.POSITIVE_INFINITY) / 1000,
      ) * 1000;
    const session: Session = {
      id: newSessionId(),
      token,
      username: review.user.username,
      namespace: checkNamespace(namespace),
      csrfToken: newCsrfToken(),
      expiresAt,
    };
    writeSessionCookie(req, res, await options.sealer.seal(session), expiresAt);
    options.logger.info('signed in', { user: session.username, namespace: session.namespace });
    res.status(201).json(viewOf(session));
  });

  router.get('/', requireSession(options.sealer), (_req: Request, res: Response) => {
    res.json(viewOf(sessionOf(res)));
  });

  // The namespaces the user can open, found with their own token.
  router.get('/namespaces', requireSession(options.sealer), async (_req: Request, res: Response) => {
    const session = sessionOf(res);
    res.json(
      await listReachableNamespaces(options.kube, {
        credentials: { kind: 'user', token: session.token },
        username: session.username,
        current: session.namespace,
      }),
    );
  });

  // Opens another namespace: the same session (token, CSRF token, expiry), resealed to show it.
  router.put('/namespace', requireSession(options.sealer), async (req: Request, res: Response) => {
    const session = sessionOf(res);
    const namespace = checkNamespace((req.body as { namespace?: unknown } | undefined)?.namespace);
    const permission = await reviewNamespace(options.kube, {
      credentials: { kind: 'user', token: session.token },
      namespace,
    });
    if (!permission.allowed)
      throw new NamespaceNotReachableError(
        permission.reason ?? `Your Kubernetes role shows you nothing in namespace ${namespace}.`,
      );
    const moved: Session = { ...session, namespace };
    writeSessionCookie(req, res, await options.sealer.seal(moved), moved.expiresAt);
    options.logger.info('namespace opened', { user: session.username, namespace });
    res.json(viewOf(moved));
  });

  // Signing out needs no valid session (an expired one must be clearable), only a same-origin page.
  router.delete('/', (req: Request, res: Response) => {
    requireSameOrigin(req);
    clearSessionCookie(req, res);
    res.status(204).end();
  });

  return router;
}
