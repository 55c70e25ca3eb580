import type { KubernetesListObject, V1Namespace } from '@kubernetes/client-node';
import { KubeApiError } from '../../kube/errors.js';
import { couchInstances, queueBindings, reviewAccess, type Permission } from './access-review.js';
import type { Credentials, KubeHttp } from './kube-http.js';
import { serviceAccountNamespace } from './token-review.js';

/** Namespaces reviewed at most per list: beyond this a user types the one they want. */
export const MAX_REVIEWED_NAMESPACES = 250;
/** Reviews in flight at once, so one user's list does not flood the API server. */
const REVIEWS_AT_ONCE = 25;

/**
 * Whether the console has anything to show the user in `namespace`: they may list its
 * CouchInstances or its QueueBindings (SelfSubjectAccessReview, as the user).
 */
export async function reviewNamespace(
  kube: KubeHttp,
  options: { credentials: Credentials; namespace: string },
): Promise<Permission> {
  const [instances, bindings] = await Promise.all([
    reviewAccess(kube, { ...options, action: couchInstances('list') }),
    reviewAccess(kube, { ...options, action: queueBindings('list') }),
  ]);
  if (instances.allowed || bindings.allowed) return { allowed: true };
  return instances;
}

export interface ReachableNamespaces {
  /** Sorted; always holds the session's namespace. */
  namespaces: string[];
  /** False when the user may not list namespaces: only the ones the console already knows are offered. */
  listed: boolean;
  /** True when more namespaces exist than were reviewed. */
  truncated: boolean;
}

/**
 * The namespaces the user can open, found as the user: the cluster's namespaces if their role may
 * list them (each then kept only if reviewNamespace allows it), plus their ServiceAccount's own and
 * the one open now. A tenant that may not list namespaces sees those two and can type another.
 */
export async function listReachableNamespaces(
  kube: KubeHttp,
  options: { credentials: Credentials; username: string; current: string },
): Promise<ReachableNamespaces> {
  const known = new Set([options.current]);
  const own = serviceAccountNamespace(options.username);
  if (own) known.add(own);
  let listed = true;
  let candidates: string[] = [];
  try {
    const list = await kube.call<KubernetesListObject<V1Namespace>>(options.credentials, {
      method: 'GET',
      path: '/api/v1/namespaces',
    });
    candidates = list.items.map((ns) => ns.metadata?.name ?? '').filter((name) => name !== '');
  } catch (err) {
    if (!(err instanceof KubeApiError && err.statusCode === 403)) throw err;
    listed = false;
  }
  const unknown = candidates.filter((name) => !known.has(name));
  const reviewed = unknown.slice(0, MAX_REVIEWED_NAMESPACES);
  for (let i = 0; i < reviewed.length; i += REVIEWS_AT_ONCE) {
    const batch = reviewed.slice(i, i + REVIEWS_AT_ONCE);
    const allowed = await Promise.all(
      batch.map(
        async (namespace) =>
          (await reviewNamespace(kube, { credentials: options.credentials, namespace })).allowed,
      ),
    );
    batch.forEach((namespace, k) => allowed[k] && known.add(namespace));
  }
  return {
    namespaces: [...known].sort(),
    listed,
    truncated: unknown.length > MAX_REVIEWED_NAMESPACES,
  };
}
