import http from 'node:http';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { wakeRequestWriter } from '../../../gateway/proxy/waker.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { request } from '../../helpers/gateway/http-request.js';
import {
  createServingInstance,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

const isRunning = (instance: CouchInstance): boolean => instance.status?.phase === 'Running';
const isHibernated = (instance: CouchInstance): boolean =>
  instance.status?.phase === 'Hibernated' && instance.status.hibernatedAt !== undefined;

/**
 * Hibernation and wake end to end: the real operator, the gateway and the kubelet stand-in running
 * engine processes, one instance with a short idle period, driven only by HTTP requests.
 */
describe('an instance hibernates when idle and wakes on its first request', () => {
  const namespace = useTestNamespace('e2e-wake');
  const ref = { namespace: '', name: 'app' };
  const wakeWrites: number[] = [];
  let platform: TestPlatform;
  let base: string;
  let auth: string;
  let sessionCookie: string;
  let admin: { username: string; password: string };

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    ref.namespace = namespace.name;
    const writeWake = wakeRequestWriter(kubeConfig.makeApiClient(CustomObjectsApi));
    platform = await startTestPlatform({
      kubeConfig,
      namespace: namespace.name,
      gatewayEnv: { SETTEE_GATEWAY_ACTIVITY_INTERVAL: '250ms' },
      writers: {
        wakeRequest: async (instance, at) => {
          wakeWrites.push(Date.parse(at));
          await writeWake(instance, at);
        },
      },
    });
    ({
      endpoint: base,
      admin,
      auth,
    } = await createServingInstance(
      kubeConfig,
      ref,
      { plan: 'free', hibernation: { idleAfter: '3s' } },
      // Running or already idle again: either way its endpoint serves, waking it when needed.
      { until: (instance) => isRunning(instance) || isHibernated(instance) },
    ));
  }, 90_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('when it has been created, then its endpoint at the gateway serves CouchDB and issues a session cookie', async () => {
    expect(base).toBe(`${platform.gateway.url}/db/${namespace.name}/app`);
    expect((await request(`${base}/notes`, { method: 'PUT', headers: { Authorization: auth } })).status).toBe(
      201,
    );
    const put = await request(`${base}/notes/first`, {
      method: 'PUT',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'kept across hibernation' }),
    });
    expect(put.status).toBe(201);
    const login = await request(`${base}/_session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: admin.username, password: admin.password }),
    });
    expect(login.status).toBe(200);
    sessionCookie = String(login.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    expect(sessionCookie).toMatch(/^AuthSession=/);
  });

  it('when no request comes for the idle period, then it hibernates', async () => {
    const { kubeConfig } = testControlPlane();
    const hibernated = await waitForInstance(kubeConfig, ref, isHibernated);
    expect(hibernated.status?.readyReplicas ?? 0).toBe(0);
  });

  it('when the first request arrives, then it wakes it and gets the right answer, and the data and the session cookie survived', async () => {
    const started = Date.now();
    const doc = await request(`${base}/notes/first`, { headers: { Authorization: auth } });
    const tookMs = Date.now() - started;
    expect(doc.status).toBe(200);
    expect(JSON.parse(doc.body)).toMatchObject({ text: 'kept across hibernation' });
    const coldStart = Number(doc.headers['x-settee-cold-start']);
    expect(coldStart).toBeGreaterThan(0);
    expect(coldStart).toBeLessThanOrEqual(tookMs);
    const session = await request(`${base}/_session`, { headers: { Cookie: sessionCookie } });
    expect(JSON.parse(session.body)).toMatchObject({ userCtx: { name: admin.username } });
    // The request is held while the engine starts (the platform's wake timeout is 60 s).
  }, 90_000);

  it('when 100 first requests arrive at once after it hibernated again, then there is one wake and 100 right answers', async () => {
    const { kubeConfig } = testControlPlane();
    await waitForInstance(kubeConfig, ref, isHibernated);
    const writesBefore = wakeWrites.length;
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => request(`${base}/notes/first`, { headers: { Authorization: auth } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 100 }, () => 200));
    expect(new Set(answers.map((a) => (JSON.parse(a.body) as { text: string }).text))).toEqual(
      new Set(['kept across hibernation']),
    );
    expect(wakeWrites.length - writesBefore).toBe(1);
  }, 120_000);

  it('when a continuous _changes feed stays open, then it stays awake past the idle period, and hibernates once the feed closes', async () => {
    const { kubeConfig } = testControlPlane();
    await waitForInstance(kubeConfig, ref, isRunning);
    const feed = await openFeed(`${base}/notes/_changes?feed=continuous&heartbeat=500&since=now`, auth);
    try {
      await new Promise((resolve) => setTimeout(resolve, 7_000)); // more than two idle periods
      const instance = await waitForInstance(kubeConfig, ref, () => true);
      expect(instance.status?.phase).toBe('Running');
      expect(instance.status?.hibernatedAt).toBeUndefined();
    } finally {
      feed.destroy();
    }
    // Idle for 3 s, scaled to zero, the pod deleted by the StatefulSet controller and its engine stopped.
    await waitForInstance(kubeConfig, ref, isHibernated, 60_000);
  }, 120_000);
});

/** Opens a continuous feed and resolves once its headers arrived; `destroy()` closes it. */
function openFeed(url: string, auth: string): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    // identity: the pouchdb-server stand-in would otherwise gzip the feed and hold it back.
    const req = http.get(
      url,
      { headers: { Authorization: auth, 'Accept-Encoding': 'identity' } },
      (res: http.IncomingMessage) => {
        if (res.statusCode !== 200) reject(new Error(`feed answered ${res.statusCode}`));
        res.resume();
        resolve(req);
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}
