import {
  AuthorizationV1Api,
  type KubernetesObject,
  type V1ClusterRole,
  type V1PolicyRule,
  type V1ResourceAttributes,
  type V1Role,
  type V1RoleBinding,
} from '@kubernetes/client-node';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  applyManifests,
  deleteClusterScoped,
  renderChart,
  uniqueRelease,
} from '../../helpers/chart/chart-harness.js';
import { GATEWAY_API_CALLS, OPERATOR_API_CALLS, type ApiCall } from './rbac/code-api-calls.js';

const releaseNamespace = useTestNamespace('chart-rbac');
const tenantNamespace = useTestNamespace('chart-rbac-tenant');
/** A namespace neither component serves in the one-namespace setup (it need not exist for a review). */
const ELSEWHERE = 'chart-rbac-elsewhere';

const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

interface InstalledRbac {
  release: string;
  objects: KubernetesObject[];
  operatorAccount: string;
  gatewayAccount: string;
  consoleAccount: string;
  operatorLease: string;
}

/** Renders the chart and installs its ServiceAccounts and RBAC for real (not a dry run). */
async function installRbac(set: Record<string, string>): Promise<InstalledRbac> {
  const release = uniqueRelease('rbac');
  const objects = (await renderChart({ release, namespace: releaseNamespace.name, set })).filter((o) =>
    RBAC_KINDS.has(o.kind ?? ''),
  );
  await applyManifests(objects);
  return {
    release,
    objects,
    operatorAccount: `${release}-settee-operator`,
    gatewayAccount: `${release}-settee-gateway`,
    consoleAccount: `${release}-settee-console`,
    operatorLease: `${release}-settee-operator`,
  };
}

/** Asks the API server's authorizer (a SubjectAccessReview) whether the ServiceAccount may do this. */
async function isAllowed(serviceAccount: string, attributes: V1ResourceAttributes): Promise<boolean> {
  const review = await testControlPlane()
    .kubeConfig.makeApiClient(AuthorizationV1Api)
    .createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${releaseNamespace.name}:${serviceAccount}`,
          groups: [
            'system:serviceaccounts',
            `system:serviceaccounts:${releaseNamespace.name}`,
            'system:authenticated',
          ],
          resourceAttributes: attributes,
        },
      },
    });
  return review.status?.allowed === true;
}

function attributesOf(call: ApiCall, namespace: string, installed: InstalledRbac): V1ResourceAttributes {
  return {
    verb: call.verb,
    group: call.group,
    resource: call.resource,
    subresource: call.subresource,
    namespace,
    name: call.name === 'operator-lease' ? installed.operatorLease : undefined,
  };
}

function describeCall(call: ApiCall): string {
  const resource = `${call.group || 'core'}/${call.resource}${call.subresource ? `/${call.subresource}` : ''}`;
  return `${call.verb} ${resource}${call.name ? ` (${call.name})` : ''}`;
}

/** The calls (in `namespaces` for served ones) this ServiceAccount may NOT make; [] when all are allowed. */
async function refusedCalls(options: {
  installed: InstalledRbac;
  serviceAccount: string;
  calls: readonly ApiCall[];
  servedNamespaces: readonly string[];
}): Promise<string[]> {
  const refused: string[] = [];
  for (const call of options.calls) {
    const namespaces = call.scope === 'release' ? [releaseNamespace.name] : options.servedNamespaces;
    for (const namespace of namespaces) {
      if (!(await isAllowed(options.serviceAccount, attributesOf(call, namespace, options.installed))))
        refused.push(`${describeCall(call)} in ${namespace} (${call.by})`);
    }
  }
  return refused;
}

/** Each (verb, resource, name) a set of rules grants, in describeCall's form. */
function grantsOf(rules: readonly V1PolicyRule[]): string[] {
  const grants = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? [])
      for (const resourcePath of rule.resources ?? [])
        for (const verb of rule.verbs) {
          const [resource = '', subresource] = resourcePath.split('/');
          grants.add(
            describeCall({
              verb,
              group,
              resource,
              subresource,
              scope: 'served',
              name: rule.resourceNames ? 'operator-lease' : undefined,
              by: '',
            }),
          );
        }
  }
  return [...grants].sort();
}

/** The rules of every Role and ClusterRole bound to this ServiceAccount in the rendered chart. */
function rulesBoundTo(objects: readonly KubernetesObject[], serviceAccount: string): V1PolicyRule[] {
  const roles = objects
    .filter((o): o is V1RoleBinding => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding')
    .filter((binding) =>
      binding.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount),
    )
    .map((binding) => `${binding.roleRef.kind}/${binding.roleRef.name}`);
  return objects
    .filter((o) => roles.includes(`${o.kind}/${o.metadata?.name}`))
    .flatMap((o) => (o as V1Role | V1ClusterRole).rules ?? []);
}

function expectedGrants(calls: readonly ApiCall[]): string[] {
  return [...new Set(calls.map(describeCall))].sort();
}

describe('RBAC when every namespace is served (ClusterRoles)', () => {
  let installed: InstalledRbac;
  beforeAll(async () => {
    installed = await installRbac({});
  });
  afterAll(() => deleteClusterScoped(installed?.objects ?? []));

  it("when the operator's ServiceAccount makes each call the operator's code makes, then the API server allows it in any namespace", async () => {
    const refused = await refusedCalls({
      installed,
      serviceAccount: installed.operatorAccount,
      calls: OPERATOR_API_CALLS,
      servedNamespaces: [tenantNamespace.name, ELSEWHERE],
    });
    expect(refused).toEqual([]);
  });

  it("when the gateway's ServiceAccount makes each call the gateway's code makes, then the API server allows it in any namespace", async () => {
    const refused = await refusedCalls({
      installed,
      serviceAccount: installed.gatewayAccount,
      calls: GATEWAY_API_CALLS,
      servedNamespaces: [tenantNamespace.name, ELSEWHERE],
    });
    expect(refused).toEqual([]);
  });

  it('when the rules bound to each ServiceAccount are listed, then they grant exactly the calls its code makes', () => {
    expect(grantsOf(rulesBoundTo(installed.objects, installed.operatorAccount))).toEqual(
      expectedGrants(OPERATOR_API_CALLS),
    );
    expect(grantsOf(rulesBoundTo(installed.objects, installed.gatewayAccount))).toEqual(
      expectedGrants(GATEWAY_API_CALLS),
    );
  });

  it("when the console's ServiceAccount reaches for tenants' objects, then it is refused; it may only create TokenReviews", async () => {
    expect(
      await isAllowed(installed.consoleAccount, {
        verb: 'create',
        group: 'authentication.k8s.io',
        resource: 'tokenreviews',
      }),
    ).toBe(true);
    for (const [group, resource] of [
      ['settee.dev', 'couchinstances'],
      ['settee.dev', 'queuebindings'],
      ['', 'secrets'],
      ['', 'events'],
      ['', 'namespaces'],
    ] as const) {
      for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'delete']) {
        const attributes = { verb, group, resource, namespace: tenantNamespace.name };
        expect({ resource, verb, allowed: await isAllowed(installed.consoleAccount, attributes) }).toEqual({
          resource,
          verb,
          allowed: false,
        });
      }
    }
    expect(
      await isAllowed(installed.consoleAccount, {
        verb: 'create',
        group: 'authorization.k8s.io',
        resource: 'subjectaccessreviews',
      }),
    ).toBe(false);
  });

  it('when the gateway asks to read, write or delete a Secret by name, then it is refused (it only watches the queue env Secrets)', async () => {
    for (const verb of ['get', 'create', 'update', 'patch', 'delete']) {
      const attributes = {
        verb,
        resource: 'secrets',
        namespace: releaseNamespace.name,
        name: 'prod-settee-queue-master',
      };
      expect({ verb, allowed: await isAllowed(installed.gatewayAccount, attributes) }).toEqual({
        verb,
        allowed: false,
      });
    }
  });

  it('when either ServiceAccount reaches for what its code never touches, then it is refused', async () => {
    const outside: Array<[string, V1ResourceAttributes]> = [
      [installed.operatorAccount, { verb: 'delete', resource: 'secrets', namespace: tenantNamespace.name }],
      [installed.operatorAccount, { verb: 'update', resource: 'secrets', namespace: tenantNamespace.name }],
      [installed.operatorAccount, { verb: 'get', resource: 'pods', namespace: tenantNamespace.name }],
      [
        installed.operatorAccount,
        { verb: 'delete', group: 'apps', resource: 'statefulsets', namespace: tenantNamespace.name },
      ],
      [
        installed.operatorAccount,
        { verb: 'list', group: 'apps', resource: 'deployments', namespace: tenantNamespace.name },
      ],
      [
        installed.operatorAccount,
        { verb: 'update', group: 'settee.dev', resource: 'couchinstances', namespace: tenantNamespace.name },
      ],
      [
        installed.operatorAccount,
        { verb: 'delete', group: 'settee.dev', resource: 'couchinstances', namespace: tenantNamespace.name },
      ],
      [
        installed.operatorAccount,
        // patch is granted (closed days' request counts are pruned); deleting a Lease is not.
        { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace: tenantNamespace.name },
      ],
      [
        installed.operatorAccount,
        {
          verb: 'update',
          group: 'coordination.k8s.io',
          resource: 'leases',
          namespace: releaseNamespace.name,
          name: 'someone-else',
        },
      ],
      [
        installed.operatorAccount,
        { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
      ],
      [installed.operatorAccount, { verb: 'list', resource: 'nodes' }],
      [installed.gatewayAccount, { verb: 'get', resource: 'pods', namespace: tenantNamespace.name }],
      [installed.gatewayAccount, { verb: 'list', resource: 'configmaps', namespace: tenantNamespace.name }],
      [
        installed.gatewayAccount,
        { verb: 'patch', group: 'apps', resource: 'statefulsets', namespace: tenantNamespace.name },
      ],
      [
        installed.gatewayAccount,
        {
          verb: 'patch',
          group: 'settee.dev',
          resource: 'couchinstances',
          subresource: 'status',
          namespace: tenantNamespace.name,
        },
      ],
      [
        installed.gatewayAccount,
        { verb: 'delete', group: 'settee.dev', resource: 'couchinstances', namespace: tenantNamespace.name },
      ],
      [
        installed.gatewayAccount,
        {
          verb: 'patch',
          group: 'settee.dev',
          resource: 'queuebindings',
          subresource: 'status',
          namespace: tenantNamespace.name,
        },
      ],
      [
        installed.gatewayAccount,
        { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace: tenantNamespace.name },
      ],
      [installed.gatewayAccount, { verb: 'create', resource: 'events', namespace: tenantNamespace.name }],
      [installed.gatewayAccount, { verb: 'list', resource: 'nodes' }],
    ];
    const allowed: string[] = [];
    for (const [account, attributes] of outside) {
      if (await isAllowed(account, attributes)) allowed.push(`${account}: ${JSON.stringify(attributes)}`);
    }
    expect(allowed).toEqual([]);
  });
});

describe('RBAC when one namespace is served (Roles)', () => {
  let installed: InstalledRbac;
  beforeAll(async () => {
    installed = await installRbac({ watchNamespace: tenantNamespace.name });
  });
  afterAll(() => deleteClusterScoped(installed?.objects ?? []));

  it("when rendered, then nothing cluster-wide is granted but the console's TokenReview (a cluster-scoped call)", () => {
    const clusterWide = installed.objects.filter((o) => o.kind?.startsWith('Cluster'));
    expect(clusterWide.map((o) => `${o.kind}/${o.metadata?.name}`).sort()).toEqual([
      `ClusterRole/${installed.consoleAccount}`,
      `ClusterRoleBinding/${installed.consoleAccount}`,
    ]);
    expect(grantsOf(rulesBoundTo(installed.objects, installed.consoleAccount))).toEqual([
      'create authentication.k8s.io/tokenreviews',
    ]);
  });

  it('when each ServiceAccount makes the calls its code makes in the watched namespace, then the API server allows them', async () => {
    for (const [serviceAccount, calls] of [
      [installed.operatorAccount, OPERATOR_API_CALLS],
      [installed.gatewayAccount, GATEWAY_API_CALLS],
    ] as const) {
      expect(
        await refusedCalls({ installed, serviceAccount, calls, servedNamespaces: [tenantNamespace.name] }),
      ).toEqual([]);
    }
  });

  it('when either ServiceAccount makes those calls in any other namespace, then every one is refused', async () => {
    for (const [serviceAccount, calls] of [
      [installed.operatorAccount, OPERATOR_API_CALLS],
      [installed.gatewayAccount, GATEWAY_API_CALLS],
    ] as const) {
      const served = calls.filter((call) => call.scope === 'served');
      const refused = await refusedCalls({
        installed,
        serviceAccount,
        calls: served,
        servedNamespaces: [ELSEWHERE],
      });
      expect(refused).toHaveLength(served.length);
    }
  });

  it('when either ServiceAccount tries to read the Secrets of the release namespace (the queue master secret), then it is refused', async () => {
    for (const account of [installed.operatorAccount, installed.gatewayAccount]) {
      for (const verb of ['get', 'list', 'watch']) {
        const attributes = { verb, resource: 'secrets', namespace: releaseNamespace.name };
        expect({ account, verb, allowed: await isAllowed(account, attributes) }).toEqual({
          account,
          verb,
          allowed: false,
        });
      }
    }
  });
});
