import crypto from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { ConsoleServer } from '../../../console/console-server.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import { ConsoleClient, startTestConsole } from '../../helpers/console/console-harness.js';
import { createCouchInstance } from '../../helpers/console/console-tenants.js';
import { testControlPlane } from '../../helpers/kube.js';

/**
 * The namespace switcher's API against a real API server. Alice is a tenant of A and, by a second
 * RoleBinding, of C; she may not list namespaces. Carol is a tenant of C who may also list
 * namespaces cluster-wide, and is bound in A too. B is nobody's here but Bob's.
 */
const suffix = crypto.randomBytes(3).toString('hex');
const nsA = `switch-a-${suffix}`;
const nsB = `switch-b-${suffix}`;
const nsC = `switch-c-${suffix}`;
const consoleRef = { namespace: nsA, serviceAccount: 'settee-console' };
const listNamespaces = `switch-list-namespaces-${suffix}`;

describe('switching namespaces in the console', () => {
  const { kubeConfig: admin } = testControlPlane();
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  let server: ConsoleServer;
  let alice: string;
  let carol: string;

  const bindTenantRole = (namespace: string, subject: { name: string; namespace: string }) =>
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: `settee-tenant-${subject.namespace}-${subject.name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'settee-tenant' },
        subjects: [{ kind: 'ServiceAccount', ...subject }],
      },
    });

  beforeAll(async () => {
    alice = (await provisionTenant(admin, { namespace: nsA, serviceAccount: 'alice' })).token;
    await provisionTenant(admin, { namespace: nsB, serviceAccount: 'bob' });
    carol = (await provisionTenant(admin, { namespace: nsC, serviceAccount: 'carol' })).token;
    await bindTenantRole(nsC, { name: 'alice', namespace: nsA });
    await bindTenantRole(nsA, { name: 'carol', namespace: nsC });
    await rbac.createClusterRole({
      body: {
        metadata: { name: listNamespaces },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: listNamespaces },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: listNamespaces },
        subjects: [{ kind: 'ServiceAccount', name: 'carol', namespace: nsC }],
      },
    });
    await createCouchInstance(customObjects, { namespace: nsC, name: 'charlie' });
    const consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    server = await startTestConsole({ admin, consoleToken });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    for (const name of [nsA, nsB, nsC]) await core.deleteNamespace({ name }).catch(() => undefined);
    await rbac.deleteClusterRoleBinding({ name: listNamespaces }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: listNamespaces }).catch(() => undefined);
    const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
    await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
  });

  it('when a user may not list namespaces, then the switcher offers only their own, opening another they are bound in works, and one they are not is refused with the reason and changes nothing', async () => {
    const client = new ConsoleClient(server.url);
    await client.signIn(alice);
    expect((await client.json('GET', '/api/session/namespaces')).body).toEqual({
      namespaces: [nsA],
      listed: false,
      truncated: false,
    });

    const moved = await client.json<{ namespace: string; csrfToken: string }>(
      'PUT',
      '/api/session/namespace',
      { namespace: nsC },
    );
    expect(moved.status).toBe(200);
    expect(moved.body.namespace).toBe(nsC);
    // The same session moved: its CSRF token is unchanged, and the cookie now opens C.
    expect(moved.body.csrfToken).toBe(client.csrfToken);
    expect((await client.json<{ namespace: string }>('GET', '/api/session')).body.namespace).toBe(nsC);
    const list = await client.json<{ items: { name: string }[] }>('GET', `/api/namespaces/${nsC}/instances`);
    expect(list.body.items.map((i) => i.name)).toEqual(['charlie']);
    // Now C is known to the session, and so is the ServiceAccount's own A.
    expect((await client.json('GET', '/api/session/namespaces')).body).toMatchObject({
      namespaces: [nsA, nsC].sort(),
    });

    const refused = await client.json<{ error: string; fields: { namespace: string } }>(
      'PUT',
      '/api/session/namespace',
      { namespace: nsB },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.body.fields.namespace).toMatch(
      new RegExp(`does not allow you to list couchinstances in namespace ${nsB}`),
    );
    expect((await client.json<{ namespace: string }>('GET', '/api/session')).body.namespace).toBe(nsC);
  });

  it('when a user may list namespaces, then the switcher offers exactly those where their role lets them list instances or queues', async () => {
    const client = new ConsoleClient(server.url);
    await client.signIn(carol);
    const answer = await client.json<{ namespaces: string[]; listed: boolean }>(
      'GET',
      '/api/session/namespaces',
    );
    expect(answer.body.listed).toBe(true);
    // Every namespace of the cluster was listed; B, kube-system, default and the rest are filtered out.
    expect(answer.body.namespaces).toEqual([nsA, nsC].sort());
  });

  it('when the switch is bad input or comes without the CSRF token, then it is refused and the session stays', async () => {
    const client = new ConsoleClient(server.url);
    await client.signIn(alice);
    const bad = await client.json<{ fields: Record<string, string> }>('PUT', '/api/session/namespace', {
      namespace: 'Not_A_Namespace',
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.fields)).toEqual(['namespace']);
    const missing = await client.json<{ fields: Record<string, string> }>(
      'PUT',
      '/api/session/namespace',
      {},
    );
    expect(missing.status).toBe(400);
    const noCsrf = await client.request('PUT', '/api/session/namespace', { namespace: nsC }, { csrf: null });
    expect(noCsrf.status).toBe(403);
    expect(client.lastSetCookie).toEqual([]);
    expect((await client.json<{ namespace: string }>('GET', '/api/session')).body.namespace).toBe(nsA);
  });
});
