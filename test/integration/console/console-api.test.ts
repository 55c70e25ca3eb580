import crypto from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import { getFreePort } from '../../../local/ports.js';
import { waitFor } from '../../../local/wait.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import {
  ConsoleClient,
  kubeConfigWithToken,
  startTestConsole,
} from '../../helpers/console/console-harness.js';
import { testControlPlane } from '../../helpers/kube.js';
import { createMemoryLogger } from '../../helpers/memory-logger.js';

/**
 * The console's API against a real API server: two tenants, each a ServiceAccount bound to the
 * tenant Role in its own namespace, and the console as its own ServiceAccount that may only create
 * TokenReviews. Every read and write is the user's, so what tenant A may not do the API server
 * refuses, and the console passes the refusal on.
 */
const suffix = crypto.randomBytes(3).toString('hex');
const tenantA = { namespace: `console-a-${suffix}`, serviceAccount: 'alice' };
const tenantB = { namespace: `console-b-${suffix}`, serviceAccount: 'bob' };
const consoleRef = { namespace: `console-sys-${suffix}`, serviceAccount: 'settee-console' };

const instance = (name: string, spec: Record<string, unknown> = { plan: 'free' }) => ({
  apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
  kind: 'CouchInstance',
  metadata: { name },
  spec,
});

describe('the console API acts as the signed-in user', () => {
  const { kubeConfig: admin } = testControlPlane();
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  const memory = createMemoryLogger('debug');
  let server: ConsoleServer;
  let consoleToken: string;
  let tokenA: string;
  let tokenB: string;
  let client: ConsoleClient;

  beforeAll(async () => {
    tokenA = (await provisionTenant(admin, tenantA)).token;
    tokenB = (await provisionTenant(admin, tenantB)).token;
    await core.createNamespace({ body: { metadata: { name: consoleRef.namespace } } });
    consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    for (const [namespace, name] of [
      [tenantA.namespace, 'alpha'],
      [tenantB.namespace, 'bravo-secret-db'],
    ] as const) {
      await customObjects.createNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        namespace,
        plural: 'couchinstances',
        body: instance(name),
      });
    }
    await core.createNamespacedSecret({
      namespace: tenantB.namespace,
      body: {
        metadata: { name: 'bravo-secret-db-admin' },
        stringData: { username: 'admin', password: 'b-password' },
      },
    });
    server = await startTestConsole({
      admin,
      consoleToken,
      logger: memory.logger,
      stream: { heartbeatMs: 500, retryMs: 200 },
    });
  }, 60_000);

  beforeEach(() => {
    client = new ConsoleClient(server.url);
  });

  afterAll(async () => {
    await server?.stop();
    for (const name of [tenantA.namespace, tenantB.namespace, consoleRef.namespace])
      await core.deleteNamespace({ name }).catch(() => undefined);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
    await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
  });

  it("when the console's own identity asks for a tenant's instances or Secrets, then the API server refuses it", async () => {
    const own = kubeConfigWithToken(admin, consoleToken).makeApiClient(CustomObjectsApi);
    await expect(
      own.listNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        namespace: tenantA.namespace,
        plural: 'couchinstances',
      }),
    ).rejects.toMatchObject({ code: 403 });
    const ownCore = kubeConfigWithToken(admin, consoleToken).makeApiClient(CoreV1Api);
    await expect(ownCore.listNamespacedSecret({ namespace: tenantB.namespace })).rejects.toMatchObject({
      code: 403,
    });
  });

  it('when tenant A signs in, then the cookie is HttpOnly and SameSite=Strict, the session names A and its namespace, and no answer carries the token', async () => {
    const response = await client.signIn(tokenA);
    expect(response.status).toBe(201);
    const [cookie] = client.lastSetCookie;
    expect(cookie).toMatch(/^settee-console=/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toContain(tokenA);
    const session = await client.json<Record<string, string>>('GET', '/api/session');
    expect(session.body).toMatchObject({
      username: `system:serviceaccount:${tenantA.namespace}:alice`,
      namespace: tenantA.namespace,
    });
    expect(JSON.stringify(session.body)).not.toContain(tokenA);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it("when tenant A lists instances, then only A's are there; asking for B's namespace, instance or credentials directly is refused by RBAC", async () => {
    await client.signIn(tokenA);
    const own = await client.json<{
      items: { name: string }[];
      permissions: Record<string, { allowed: boolean }>;
    }>('GET', `/api/namespaces/${tenantA.namespace}/instances`);
    expect(own.status).toBe(200);
    expect(own.body.items.map((row) => row.name)).toEqual(['alpha']);
    expect(own.body.permissions.create?.allowed).toBe(true);

    for (const path of [
      `/api/namespaces/${tenantB.namespace}/instances`,
      `/api/namespaces/${tenantB.namespace}/instances/bravo-secret-db`,
      `/api/namespaces/${tenantB.namespace}/instances/bravo-secret-db/credentials`,
      `/api/namespaces/${tenantB.namespace}/bindings`,
    ]) {
      const refused = await client.json<{ error: string; message: string }>('GET', path);
      expect({ path, status: refused.status, error: refused.body.error }).toEqual({
        path,
        status: 403,
        error: 'forbidden',
      });
      expect(refused.body.message).toContain(`system:serviceaccount:${tenantA.namespace}:alice`);
      expect(JSON.stringify(refused.body)).not.toContain('b-password');
    }
    const deleteB = await client.request(
      'DELETE',
      `/api/namespaces/${tenantB.namespace}/instances/bravo-secret-db`,
      { confirmName: 'bravo-secret-db' },
    );
    expect(deleteB.status).toBe(403);
    const stillThere = await customObjects.getNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      namespace: tenantB.namespace,
      plural: 'couchinstances',
      name: 'bravo-secret-db',
    });
    expect(stillThere).toBeDefined();
  });

  it('when a write comes without the CSRF token or from another origin, then it is refused and nothing is created', async () => {
    await client.signIn(tokenA);
    const path = `/api/namespaces/${tenantA.namespace}/instances`;
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
    const foreign = new ConsoleClient(server.url);
    expect(
      (await foreign.request('POST', '/api/session', { token: tokenA }, { origin: 'http://evil.example' }))
        .status,
    ).toBe(403);
  });

  it("when tenant A reaches for tenant B's dead letters or messages, then RBAC refuses reading B's queue token and nothing is sent to the queue", async () => {
    await client.signIn(tokenA);
    const base = `/api/namespaces/${tenantB.namespace}/bindings/cache`;
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
      `/api/namespaces/${tenantA.namespace}/bindings/cache/dlq/a%2Fb/retry`,
    );
    expect(badId.status).toBe(400);
    expect(Object.keys(badId.body.fields)).toEqual(['dlqId']);
    const own = `/api/namespaces/${tenantA.namespace}/bindings/cache`;
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
    await client.signIn(tokenA);
    const path = `/api/namespaces/${tenantA.namespace}/instances`;
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

  it('when a token is wrong, then sign-in answers 401 with the reason and sets no session', async () => {
    const refused = await client.json<{ error: string; message: string }>('POST', '/api/session', {
      token: `${tokenA.slice(0, -4)}AAAA`,
    });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('sign-in-refused');
    expect(refused.body.message).toMatch(/refused this token/);
    expect(client.cookie).toBeUndefined();
  });

  it("when the console's own identity may not create TokenReviews, then sign-in fails with a message naming that, not the user's token", async () => {
    const misconfigured = await startTestConsole({ admin, consoleToken: tokenB });
    try {
      const refused = await new ConsoleClient(misconfigured.url).json<{ error: string; message: string }>(
        'POST',
        '/api/session',
        {
          token: tokenA,
        },
      );
      expect(refused.status).toBe(500);
      expect(refused.body.error).toBe('console-misconfigured');
      expect(refused.body.message).toMatch(/may not create TokenReviews/);
    } finally {
      await misconfigured.stop();
    }
  });

  it('when the API server cannot be reached, then sign-in and every call answer 503 saying so, and the session is kept', async () => {
    const closedPort = await getFreePort();
    const away = await startTestConsole({ admin, consoleToken, server: `https://127.0.0.1:${closedPort}` });
    try {
      const tenant = new ConsoleClient(away.url);
      const signIn = await tenant.json<{ error: string; message: string }>('POST', '/api/session', {
        token: tokenA,
      });
      expect(signIn.status).toBe(503);
      expect(signIn.body).toMatchObject({
        error: 'kube-unreachable',
        message: expect.stringMatching(/cannot be reached/),
      });
      // A session made while the API server answered (same key) meets the outage on its next call.
      await client.signIn(tokenA);
      tenant.cookie = client.cookie;
      tenant.csrfToken = client.csrfToken;
      for (const [method, path] of [
        ['GET', `/api/namespaces/${tenantA.namespace}/instances`],
        ['POST', `/api/namespaces/${tenantA.namespace}/instances`],
      ] as const) {
        const answer = await tenant.json<{ error: string }>(
          method,
          path,
          method === 'POST' ? { name: 'x', plan: 'free' } : undefined,
        );
        expect({ path, method, status: answer.status, error: answer.body.error }).toEqual({
          path,
          method,
          status: 503,
          error: 'kube-unreachable',
        });
      }
      expect(tenant.lastSetCookie).toEqual([]);
    } finally {
      await away.stop();
    }
  });

  it('when the session cookie is tampered with, then the API answers 401 invalid', async () => {
    await client.signIn(tokenA);
    client.cookie = `${client.cookie?.slice(0, -6)}AAAAAA`;
    const answer = await client.json<{ reason: string }>('GET', '/api/session');
    expect(answer).toMatchObject({ status: 401, body: { reason: 'invalid' } });
  });

  it("when the user's token is revoked (the ServiceAccount deleted), then the next call ends the session with that reason and clears the cookie", async () => {
    const carol = await provisionTenant(admin, { namespace: tenantA.namespace, serviceAccount: 'carol' });
    await client.signIn(carol.token);
    expect((await client.json('GET', `/api/namespaces/${tenantA.namespace}/instances`)).status).toBe(200);
    await core.deleteNamespacedServiceAccount({ name: 'carol', namespace: tenantA.namespace });
    // The API server caches a token's successful authentication for up to 10 s.
    const ended = await waitFor(
      'the API server to refuse the revoked token',
      async () => {
        const answer = await client.json<{ error: string; reason: string; message: string }>(
          'GET',
          `/api/namespaces/${tenantA.namespace}/instances`,
        );
        return answer.status === 200 ? undefined : answer;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    expect(ended.status).toBe(401);
    expect(ended.body).toMatchObject({ error: 'not-signed-in', reason: 'token-rejected' });
    expect(ended.body.message).toMatch(/expired or was revoked/);
    expect(client.lastSetCookie.join()).toMatch(/settee-console=;/);
  });

  it('when a session outlives its TTL, then the API answers 401 expired', async () => {
    const shortLived = await startTestConsole({ admin, consoleToken, config: { sessionTtlMs: 1_000 } });
    try {
      const short = new ConsoleClient(shortLived.url);
      await short.signIn(tokenA);
      expect(short.lastSetCookie[0]).toMatch(/Max-Age=1;/);
      const cookie = short.cookie;
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      short.cookie = cookie; // a browser would have dropped it; a replayed copy must not work either
      expect(await short.json('GET', '/api/session')).toMatchObject({
        status: 401,
        body: { reason: 'expired' },
      });
    } finally {
      await shortLived.stop();
    }
  });

  it('when live updates are open, then a change arrives as an event, and a session may hold only its cap of streams', async () => {
    const capped = await startTestConsole({
      admin,
      consoleToken,
      config: { maxStreamsPerSession: 2 },
      stream: { heartbeatMs: 500 },
    });
    const controllers: AbortController[] = [];
    try {
      const tenant = new ConsoleClient(capped.url);
      await tenant.signIn(tokenA);
      const path = `${capped.url}/api/namespaces/${tenantA.namespace}/instances/stream`;
      const open = async (): Promise<Response> => {
        const controller = new AbortController();
        controllers.push(controller);
        return fetch(path, { headers: { cookie: tenant.cookie ?? '' }, signal: controller.signal });
      };
      const first = await open();
      const second = await open();
      const third = await open();
      expect([first.status, second.status, third.status]).toEqual([200, 200, 429]);
      expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);

      const reader = first.body!.getReader();
      let text = '';
      const readUntil = async (pattern: RegExp): Promise<void> => {
        while (!pattern.test(text)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
          text += new TextDecoder().decode(value);
        }
      };
      await readUntil(/event: snapshot\ndata: .*"alpha"/);
      await customObjects.createNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        namespace: tenantA.namespace,
        plural: 'couchinstances',
        body: instance('live-one'),
      });
      await readUntil(/event: upsert\ndata: \{"name":"live-one"/);
      // Closing a stream frees its slot, once the server has seen the close: a loaded machine can
      // take longer than a fixed pause for that, so refusals before it are retried.
      controllers[1]?.abort();
      const reopened = await waitFor(
        'a stream in the freed slot',
        async () => {
          const answer = await open();
          return answer.status === 429 ? undefined : answer;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      expect(reopened.status).toBe(200);
    } finally {
      for (const controller of controllers) controller.abort();
      await capped.stop();
    }
  });

  it('when anything was logged, then no token or session cookie appears in the logs', () => {
    const logged = JSON.stringify(memory.entries);
    expect(memory.entries.length).toBeGreaterThan(0);
    for (const secret of [tokenA, tokenB, consoleToken]) expect(logged).not.toContain(secret);
  });
});
