import { ConsoleIdentityError } from '../http/errors.js';
import type { KubeHttp } from './kube-http.js';

/** Who a token belongs to, as the API server's authenticators say. */
export interface ReviewedUser {
  username: string;
  groups: string[];
}

export type TokenReviewResult =
  { authenticated: true; user: ReviewedUser } | { authenticated: false; error: string };

interface TokenReviewStatus {
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] }; error?: string };
}

/**
 * Asks the API server whether it accepts `token` (authentication.k8s.io/v1 TokenReview), with the
 * console's own identity, which may create TokenReviews and nothing more. The token accepted here
 * is the one every later call is made with, so RBAC, not the console, decides what it may do.
 */
export async function reviewToken(kube: KubeHttp, token: string): Promise<TokenReviewResult> {
  const review = await kube
    .call<TokenReviewStatus>(
      { kind: 'console' },
      {
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      },
    )
    .catch((err: unknown) => {
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 401 || status === 403) throw new ConsoleIdentityError({ cause: err });
      throw err;
    });
  const status = review.status ?? {};
  if (status.authenticated && status.user?.username)
    return {
      authenticated: true,
      user: { username: status.user.username, groups: status.user.groups ?? [] },
    };
  return { authenticated: false, error: status.error || 'the API server does not accept this token' };
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):[^:]+$/;

/** A ServiceAccount's own namespace, from its username; undefined for other users. */
export function serviceAccountNamespace(username: string): string | undefined {
  return SERVICE_ACCOUNT_USER.exec(username)?.[1];
}

/** The `exp` claim of a JWT bearer token, in ms, read without verifying (the TokenReview verified it). */
export function tokenExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (token.split('.').length !== 3 || !payload) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
