import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { ConsoleClient, kubeConfigWithToken } from '../../helpers/console/console-harness.js';
import { useConsoleTenants } from '../../helpers/console/console-tenants.js';
import { testControlPlane } from '../../helpers/kube.js';

/**
 * The console's API against a real API server: two tenants, each a ServiceAccount bound to the
 * tenant Role in its own namespace, and the console as its own ServiceAccount that may only create
 * TokenReviews. Every read and write is the user's, so what tenant A may not do the API server
 * refuses, and the console passes the refusal on.
 */
describe('the console API acts as the signed-in user', () => {
  const { kubeConfig: admin } = testControlPlane();
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  const t = useConsoleTenants();
  let client: ConsoleClient;

  beforeEach(() => {
    client = new ConsoleClient(t.server.url);
  });

  it("when the console's own identity asks for a tenant's instances or Secrets, then the API server refuses it", async () => {
    const own = kubeConfigWithToken(admin, t.consoleToken).makeApiClient(CustomObjectsApi);
    await expect(
      own.listNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        namespace: t.tenantA.namespace,
        plural: 'couchinstances',
      }),
    ).rejects.toMatchObject({ code: 403 });
    const ownCore = kubeConfigWithToken(admin, t.consoleToken).makeApiClient(CoreV1Api);
    await expect(ownCore.listNamespacedSecret({ namespace: t.tenantB.namespace })).rejects.toMatchObject({
      code: 403,
    });
  });

  it('when tenant A signs in, then the cookie is HttpOnly and SameSite=Strict, the session names A and its namespace, and no answer carries the token', async () => {
    const response = await client.signIn(t.tokenA);
    expect(response.status).toBe(201);
    const [cookie] = client.lastSetCookie;
    expect(cookie).toMatch(/^settee-console=/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toContain(t.tokenA);
    const session = await client.json<Record<string, string>>('GET', '/api/session');
    expect(session.body).toMatchObject({
      username: `system:serviceaccount:${t.tenantA.namespace}:alice`,
      namespace: t.tenantA.namespace,
    });
    expect(JSON.stringify(session.body)).not.toContain(t.tokenA);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it("when tenant A lists instances, then only A's are there; asking for B's namespace, instance or credentials directly is refused by RBAC", async () => {
    await client.signIn(t.tokenA);
    const own = await client.json<{
      items: { name: string }[];
      permissions: Record<string, { allowed: boolean }>;
    }>('GET', `/api/namespaces/${t.tenantA.namespace}/instances`);
    expect(own.status).toBe(200);
    expect(own.body.items.map((row) => row.name)).toEqual(['alpha']);
    expect(own.body.permissions.create?.allowed).toBe(true);

    for (const path of [
      `/api/namespaces/${t.tenantB.namespace}/instances`,
      `/api/namespaces/${t.tenantB.namespace}/instances/bravo-secret-db`,
      `/api/namespaces/${t.tenantB.namespace}/instances/bravo-secret-db/credentials`,
      `/api/namespaces/${t.tenantB.namespace}/bindings`,
    ]) {
      const refused = await client.json<{ error: string; message: string }>('GET', path);
      expect({ path, status: refused.status, error: refused.body.error }).toEqual({
        path,
        status: 403,
        error: 'forbidden',
      });
      expect(refused.body.message).toContain(`system:serviceaccount:${t.tenantA.namespace}:alice`);
      expect(JSON.stringify(refused.body)).not.toContain('b-password');
    }
    const deleteB = await client.request(
      'DELETE',
      `/api/namespaces/${t.tenantB.namespace}/instances/bravo-secret-db`,
      { confirmName: 'bravo-secret-db' },
    );
    expect(deleteB.status).toBe(403);
    const stillThere = await customObjects.getNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      namespace: t.tenantB.namespace,
      plural: 'couchinstances',
      name: 'bravo-secret-db',
    });
    expect(stillThere).toBeDefined();
  });

  it('when a write comes without the CSRF token or from another origin, then it is refused and nothing is created', async () => {
    await client.signIn(t.tokenA);
    const path = `/api/namespaces/${t.tenantA.namespace}/instances`;
    const noToken = await client.request('POST', path, { name: 'csrf-1', plan: 'free' }, { csrf: null });
    const wrongToken = await client.request(
      'POST',
      path,
      { name: 'csrf-2', plan: 'free' },
      { csrf: 'x'.repeat(32) },
    );
    const otherOrigin = await client.request(
      'POST',
      path,
      { name: 'csrf-3', plan: 'free' },
      { origin: 'http://evil.example' },
    );
    const noOrigin = await client.request('POST', path, { name: 'csrf-4', plan: 'free' }, { origin: null });
    expect([noToken.status, wrongToken.status, otherOrigin.status, noOrigin.status]).toEqual([
      403, 403, 403, 403,
    ]);
    const list = await client.json<{ items: { name: string }[] }>('GET', path);
    expect(list.body.items.map((row) => row.name)).toEqual(['alpha']);
    // Signing in from another origin is refused too (no login CSRF).
    const foreign = new ConsoleClient(t.server.url);
    expect(
      (await foreign.request('POST', '/api/session', { token: t.tokenA }, { origin: 'http://evil.example' }))
        .status,
    ).toBe(403);
  });

  it("when tenant A reaches for tenant B's dead letters or messages, then RBAC refuses reading B's queue token and nothing is sent to the queue", async () => {
    await client.signIn(t.tokenA);
    const base = `/api/namespaces/${t.tenantB.namespace}/bindings/cache`;
    for (const [method, path] of [
      ['GET', `${base}/dlq`],
      ['POST', `${base}/dlq/1234/retry`],
      ['DELETE', `${base}/dlq/1234`],
      ['GET', `${base}/messages`],
      ['GET', `${base}/messages/msg_1`],
      ['DELETE', `${base}/messages/msg_1`],
    ] as const) {
      const answer = await client.json<{ error: string }>(method, path);
      expect({ method, path, status: answer.status, error: answer.body.error }).toEqual({
        method,
        path,
        status: 403,
        error: 'forbidden',
      });
    }
    const badId = await client.json<{ fields: Record<string, string> }>(
      'POST',
      `/api/namespaces/${t.tenantA.namespace}/bindings/cache/dlq/a%2Fb/retry`,
    );
    expect(badId.status).toBe(400);
    expect(Object.keys(badId.body.fields)).toEqual(['dlqId']);
    const own = `/api/namespaces/${t.tenantA.namespace}/bindings/cache`;
    const badGroup = await client.json<{ fields: Record<string, string> }>(
      'GET',
      `${own}/messages?group=all`,
    );
    expect({ status: badGroup.status, fields: badGroup.body.fields }).toEqual({
      status: 400,
      fields: { group: 'one of in-flight, delivered, failed, cancelled' },
    });
    const badMessage = await client.json<{ fields: Record<string, string> }>('GET', `${own}/messages/a%20b`);
    expect({ status: badMessage.status, fields: Object.keys(badMessage.body.fields) }).toEqual({
      status: 400,
      fields: ['messageId'],
    });
  });

  it("when the create form breaks a CRD rule, then the API server's CEL message comes back beside its field and nothing is created", async () => {
    await client.signIn(t.tokenA);
    const path = `/api/namespaces/${t.tenantA.namespace}/instances`;
    const refused = await client.json<{ error: string; fields: Record<string, string> }>('POST', path, {
      name: 'eager',
      plan: 'free',
      keepAlive: true,
      idleAfter: '0s',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.fields['spec.keepAlive']).toBe('keepAlive requires plan: paid');
    expect(refused.body.fields['spec.hibernation.idleAfter']).toMatch(/at least 1s/);
    const unknownField = await client.json<{ fields: Record<string, string> }>('POST', path, {
      name: 'x',
      plan: 'free',
      replicas: 3,
    });
    expect(unknownField.status).toBe(400);
    expect(Object.keys(unknownField.body.fields)).toEqual(['replicas']);
    const list = await client.json<{ items: { name: string }[] }>('GET', path);
    expect(list.body.items.map((row) => row.name)).toEqual(['alpha']);

    const created = await client.json<{ name: string; plan: string; idleAfter: string }>('POST', path, {
      name: 'paid-one',
      plan: 'paid',
      idleAfter: '30s',
      keepAlive: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'paid-one', plan: 'paid', idleAfter: '30s' });
    const mistyped = await client.request('DELETE', `${path}/paid-one`, { confirmName: 'paid-on' });
    expect(mistyped.status).toBe(400);
    expect((await client.request('DELETE', `${path}/paid-one`, { confirmName: 'paid-one' })).status).toBe(
      204,
    );
  });

  it('when anything was logged, then no token or session cookie appears in the logs', () => {
    const logged = JSON.stringify(t.memory.entries);
    expect(t.memory.entries.length).toBeGreaterThan(0);
    for (const secret of [t.tokenA, t.tokenB, t.consoleToken]) expect(logged).not.toContain(secret);
  });
});
