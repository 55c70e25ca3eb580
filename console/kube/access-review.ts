import { SETTEE_GROUP } from '../../api/contract.js';
import type { Credentials, KubeHttp } from './kube-http.js';

/** One action the page offers, as RBAC names it. */
export interface Action {
  verb: 'get' | 'list' | 'watch' | 'create' | 'patch' | 'update' | 'delete';
  resource: string;
  /** '' for the core group (Secrets, Events). */
  group: string;
  name?: string;
}

/** Whether the user may take an action and, when not, why, in words for the page. */
export interface Permission {
  allowed: boolean;
  reason?: string;
}

export const couchInstances = (verb: Action['verb'], name?: string): Action => ({
  verb,
  resource: 'couchinstances',
  group: SETTEE_GROUP,
  name,
});
export const queueBindings = (verb: Action['verb'], name?: string): Action => ({
  verb,
  resource: 'queuebindings',
  group: SETTEE_GROUP,
  name,
});
export const secrets = (verb: Action['verb'], name?: string): Action => ({
  verb,
  resource: 'secrets',
  group: '',
  name,
});

interface AccessReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/**
 * SelfSubjectAccessReview with the user's own token, as Headlamp does: the page shows a forbidden
 * action disabled with the reason before anyone clicks it.
 */
export async function reviewAccess(
  kube: KubeHttp,
  options: { credentials: Credentials; namespace: string; action: Action },
): Promise<Permission> {
  const { action, namespace } = options;
  const review = await kube.call<AccessReviewStatus>(options.credentials, {
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          namespace,
          verb: action.verb,
          group: action.group,
          resource: action.resource,
          name: action.name,
        },
      },
    },
  });
  if (review.status?.allowed) return { allowed: true };
  const what = `${action.verb} ${action.resource}${action.name ? ` "${action.name}"` : ''} in namespace ${namespace}`;
  const why = review.status?.reason?.trim();
  return {
    allowed: false,
    reason: `Your Kubernetes role does not allow you to ${what}${why ? ` (${why})` : ''}.`,
  };
}

/** Several reviews at once, keyed as asked. */
export async function reviewAccesses<K extends string>(
  kube: KubeHttp,
  options: { credentials: Credentials; namespace: string; actions: Record<K, Action> },
): Promise<Record<K, Permission>> {
  const entries = await Promise.all(
    Object.entries<Action>(options.actions).map(
      async ([key, action]) => [key, await reviewAccess(kube, { ...options, action })] as const,
    ),
  );
  return Object.fromEntries(entries) as Record<K, Permission>;
}
