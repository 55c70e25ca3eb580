import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { getFreePort } from '../../../local/ports.js';
import { provisionTenant } from '../../../local/tenant-access.js';
import { waitFor } from '../../../local/wait.js';
import { ConsoleClient, startTestConsole } from '../../helpers/console/console-harness.js';
import { createCouchInstance, useConsoleTenants } from '../../helpers/console/console-tenants.js';
import { testControlPlane } from '../../helpers/kube.js';

/**
 * The console's sessions against a real API server: sign-in refusals, an unreachable API server,
 * tampered, revoked and expired sessions, and the live-update streams a session may hold.
 */
describe("the console's sessions", () => {
  const { kubeConfig: admin } = testControlPlane();
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  const t = useConsoleTenants();
  let client: ConsoleClient;

  beforeEach(() => {
    client = new ConsoleClient(t.server.url);
  });

  it('when a token is wrong, then sign-in answers 401 with the reason and sets no session', async () => {
    const refused = await client.json<{ error: string; message: string }>('POST', '/api/session', {
      token: `${t.tokenA.slice(0, -4)}AAAA`,
    });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('sign-in-refused');
    expect(refused.body.message).toMatch(/refused this token/);
    expect(client.cookie).toBeUndefined();
  });

  it("when the console's own identity may not create TokenReviews, then sign-in fails with a message naming that, not the user's token", async () => {
    const misconfigured = await startTestConsole({ admin, consoleToken: t.tokenB });
    try {
      const refused = await new ConsoleClient(misconfigured.url).json<{ error: string; message: string }>(
        'POST',
        '/api/session',
        {
          token: t.tokenA,
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
    const away = await startTestConsole({
      admin,
      consoleToken: t.consoleToken,
      server: `https://127.0.0.1:${closedPort}`,
    });
    try {
      const tenant = new ConsoleClient(away.url);
      const signIn = await tenant.json<{ error: string; message: string }>('POST', '/api/session', {
        token: t.tokenA,
      });
      expect(signIn.status).toBe(503);
      expect(signIn.body).toMatchObject({
        error: 'kube-unreachable',
        message: expect.stringMatching(/cannot be reached/),
      });
      // A session made while the API server answered (same key) meets the outage on its next call.
      await client.signIn(t.tokenA);
      tenant.cookie = client.cookie;
      tenant.csrfToken = client.csrfToken;
      for (const [method, path] of [
        ['GET', `/api/namespaces/${t.tenantA.namespace}/instances`],
        ['POST', `/api/namespaces/${t.tenantA.namespace}/instances`],
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
    await client.signIn(t.tokenA);
    client.cookie = `${client.cookie?.slice(0, -6)}AAAAAA`;
    const answer = await client.json<{ reason: string }>('GET', '/api/session');
    expect(answer).toMatchObject({ status: 401, body: { reason: 'invalid' } });
  });

  it("when the user's token is revoked (the ServiceAccount deleted), then the next call ends the session with that reason and clears the cookie", async () => {
    const carol = await provisionTenant(admin, { namespace: t.tenantA.namespace, serviceAccount: 'carol' });
    await client.signIn(carol.token);
    expect((await client.json('GET', `/api/namespaces/${t.tenantA.namespace}/instances`)).status).toBe(200);
    await core.deleteNamespacedServiceAccount({ name: 'carol', namespace: t.tenantA.namespace });
    // The API server caches a token's successful authentication for up to 10 s.
    const ended = await waitFor(
      'the API server to refuse the revoked token',
      async () => {
        const answer = await client.json<{ error: string; reason: string; message: string }>(
          'GET',
          `/api/namespaces/${t.tenantA.namespace}/instances`,
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
    const shortLived = await startTestConsole({
      admin,
      consoleToken: t.consoleToken,
      config: { sessionTtlMs: 1_000 },
    });
    try {
      const short = new ConsoleClient(shortLived.url);
      await short.signIn(t.tokenA);
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
      consoleToken: t.consoleToken,
      config: { maxStreamsPerSession: 2 },
      stream: { heartbeatMs: 500 },
    });
    const controllers: AbortController[] = [];
    try {
      const tenant = new ConsoleClient(capped.url);
      await tenant.signIn(t.tokenA);
      const path = `${capped.url}/api/namespaces/${t.tenantA.namespace}/instances/stream`;
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
      await createCouchInstance(customObjects, { namespace: t.tenantA.namespace, name: 'live-one' });
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
    const logged = JSON.stringify(t.memory.entries);
    expect(t.memory.entries.length).toBeGreaterThan(0);
    for (const secret of [t.tokenA, t.tokenB, t.consoleToken]) expect(logged).not.toContain(secret);
  });
});
