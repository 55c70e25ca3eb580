import {
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { SETTEE_GROUP } from '../api/contract.js';
import { isAlreadyExists } from '../kube/errors.js';

/**
 * What a tenant may do in their own namespace, and nothing outside it: their CouchInstances and
 * QueueBindings, the Secrets that hold their credentials and queue values, and the Events about
 * them. `make run`'s demo tenant and the console's tests sign in with a ServiceAccount bound to it.
 */
export const TENANT_RULES: V1PolicyRule[] = [
  {
    apiGroups: [SETTEE_GROUP],
    resources: ['couchinstances', 'queuebindings'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'create', 'update', 'patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
];

/** The console's own identity needs only to ask who a token belongs to (the chart's ClusterRole says the same). */
export const CONSOLE_RULES: V1PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
];

async function ignoreExisting(call: Promise<unknown>): Promise<void> {
  await call.catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
}

/** A bearer token for the ServiceAccount from the TokenRequest API (no token controller runs locally). */
export async function requestServiceAccountToken(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  expirationSeconds = 24 * 3600,
): Promise<string> {
  const answer = await kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: ref.name,
    namespace: ref.namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  const token = answer.status?.token;
  if (!token) throw new Error(`no token issued for ServiceAccount ${ref.namespace}/${ref.name}`);
  return token;
}

/**
 * A tenant: the namespace, a ServiceAccount, and a Role with TENANT_RULES bound to it in that
 * namespace only. Idempotent. Returns a token to sign in with.
 */
export async function provisionTenant(
  kubeConfig: KubeConfig,
  ref: { namespace: string; serviceAccount: string; tokenSeconds?: number },
): Promise<{ token: string; username: string }> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const { namespace, serviceAccount: name } = ref;
  await ignoreExisting(core.createNamespace({ body: { metadata: { name: namespace } } }));
  await ignoreExisting(core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }));
  await ignoreExisting(
    rbac.createNamespacedRole({
      namespace,
      body: { metadata: { name: 'settee-tenant' }, rules: TENANT_RULES },
    }),
  );
  await ignoreExisting(
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: `settee-tenant-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'settee-tenant' },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    }),
  );
  return {
    token: await requestServiceAccountToken(kubeConfig, { namespace, name }, ref.tokenSeconds),
    username: `system:serviceaccount:${namespace}:${name}`,
  };
}

/** The console's ServiceAccount with CONSOLE_RULES only; returns its token. */
export async function provisionConsoleIdentity(
  kubeConfig: KubeConfig,
  ref: { namespace: string; serviceAccount: string },
): Promise<string> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const { namespace, serviceAccount: name } = ref;
  const roleName = `settee-console-${namespace}-${name}`.slice(0, 253);
  await ignoreExisting(core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }));
  await ignoreExisting(
    rbac.createClusterRole({ body: { metadata: { name: roleName }, rules: CONSOLE_RULES } }),
  );
  await ignoreExisting(
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    }),
  );
  return requestServiceAccountToken(kubeConfig, { namespace, name });
}
