import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CoordinationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  activityLeaseName,
  ANNOTATION_WAKE_REQUESTED,
  LABEL_INSTANCE,
  SETTEE_GROUP,
  SETTEE_VERSION,
} from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { activityLeaseWriter, type ActivityRenewal } from '../../../gateway/proxy/activity-lease.js';
import { wakeRequestWriter } from '../../../gateway/proxy/waker.js';
import { startCouchEngine, type CouchEngine } from '../../../local/couch-engine/index.js';
import { getFreePort } from '../../../local/ports.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import {
  createCouchInstance,
  readCouchInstance,
  replaceCouchInstanceStatus,
  setInstancePod,
  startTestGateway,
} from '../../helpers/gateway/gateway-harness.js';
import { request, type PlainResponse } from '../../helpers/gateway/http-request.js';

const HIBERNATED_AT = new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The strict gateway's wake timeout: long enough that "at once" and "at the deadline" stay apart on a loaded machine. */
const STRICT_WAKE_TIMEOUT_MS = 3_000;
/** The activity interval of the main gateway. */
const ACTIVITY_INTERVAL_MS = 400;

/**
 * The wake path without an operator: the test plays the operator (it sees the wake request and
 * scales up, here by starting an engine) and the kubelet (it reports the pod), so every step the
 * gateway takes can be observed and timed.
 */
describe('the gateway wakes hibernated instances and reports activity', () => {
  const namespace = useTestNamespace('gw-wake');
  const admin = { username: 'admin', password: 'wake-secret' };
  const wakeWrites: string[] = [];
  const renewals: ActivityRenewal[] = [];
  const engines: CouchEngine[] = [];
  let dataRoot: string;
  let echo: EchoUpstream;
  let gateway: Gateway;
  let strict: Gateway;

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    const writeWake = wakeRequestWriter(customObjects);
    const writeLease = activityLeaseWriter(customObjects);
    dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-gw-wake-'));
    echo = await startEchoUpstream();
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name: 'echo' });
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'echo' },
      { port: echo.port, ready: true },
    );
    // Created before the gateways start, so their first list has them: no request races an informer.
    for (const name of ['sleepy', 'never', 'doomed']) await hibernate(kubeConfig, name);
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name: 'moved' });
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'moved' },
      { port: await getFreePort(), ready: true },
    );
    gateway = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      // Held requests wait while the test starts an engine process, slow on a loaded CI machine.
      env: {
        SETTEE_GATEWAY_ACTIVITY_INTERVAL: `${ACTIVITY_INTERVAL_MS}ms`,
        SETTEE_GATEWAY_WAKE_TIMEOUT: '60s',
      },
      writers: {
        wakeRequest: async (instance, at) => {
          wakeWrites.push(`${instance.name}@${at}`);
          await writeWake(instance, at);
        },
        activityLease: async (renewal) => {
          renewals.push(renewal);
          await writeLease(renewal);
        },
      },
    });
    strict = await startTestGateway({
      kubeConfig,
      namespace: namespace.name,
      env: {
        SETTEE_GATEWAY_WAKE_TIMEOUT: `${STRICT_WAKE_TIMEOUT_MS}ms`,
        SETTEE_GATEWAY_HOLD_QUEUE_LIMIT: '5',
        SETTEE_GATEWAY_RETRY_AFTER: '7',
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await strict?.stop();
    await echo?.close();
    await Promise.all(engines.map((engine) => engine.stop()));
    await fs.rm(dataRoot, { recursive: true, force: true });
  });

  /** An instance as the operator leaves it when it hibernates: no pod, status.hibernatedAt set a minute ago. */
  async function hibernate(kubeConfig: KubeConfig, name: string): Promise<void> {
    await createCouchInstance(kubeConfig, { namespace: namespace.name, name });
    await replaceCouchInstanceStatus(
      kubeConfig,
      { namespace: namespace.name, name },
      { phase: 'Hibernated', hibernatedAt: HIBERNATED_AT },
    );
  }

  /** The echo instance's activity renewals so far. */
  const count = (): number => renewals.filter((r) => r.instance.name === 'echo').length;
  /**
   * The count once no renewal came for a span of more than two intervals. Renewals that never
   * stop never give such a span, and this times out; a loaded machine that runs an interval's
   * timer late only makes the wait longer, where one fixed sleep would catch that renewal.
   */
  const quietCount = () =>
    waitFor(async () => {
      const before = count();
      await new Promise((resolve) => setTimeout(resolve, 2 * ACTIVITY_INTERVAL_MS + 100));
      return count() === before ? before : undefined;
    }, 15_000);

  const startEngine = async (name: string): Promise<CouchEngine> => {
    const engine = await startCouchEngine({
      dataDir: path.join(dataRoot, name),
      admin,
      port: await getFreePort(),
    });
    engines.push(engine);
    return engine;
  };

  it('when 100 requests arrive at once for a hibernated instance, then one wake is requested, all 100 get the right answer, and the activity Lease is renewed only once it is up', async () => {
    const { kubeConfig } = testControlPlane();
    const auth = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
    const responses = Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(`${gateway.url}/db/${namespace.name}/sleepy/_session?n=${i}`, {
          headers: { Authorization: auth },
        }),
      ),
    );

    // The operator's part: it sees the annotation, and the pod gets an address (not ready yet).
    const annotated = await waitFor(
      async () =>
        (await readCouchInstance(kubeConfig, { namespace: namespace.name, name: 'sleepy' })).metadata
          .annotations?.[ANNOTATION_WAKE_REQUESTED],
    );
    expect(Date.parse(annotated)).toBeGreaterThan(Date.parse(HIBERNATED_AT));
    const engine = await startEngine('sleepy');
    // Held all along, for longer than an activity interval (the engine's start): while the instance
    // wakes, no renewal (the operator's idle clock starts at Ready; each write is load on the boot).
    const sleepyRenewals = () => renewals.filter((r) => r.instance.name === 'sleepy');
    expect(sleepyRenewals()).toEqual([]);
    await setInstancePod(
      kubeConfig,
      { namespace: namespace.name, name: 'sleepy' },
      { port: engine.port, ready: false },
    );

    const answered = await responses;
    expect(answered.map((r) => r.status)).toEqual(Array.from({ length: 100 }, () => 200));
    for (const response of answered) {
      expect((JSON.parse(response.body) as { userCtx: { name: string } }).userCtx.name).toBe(admin.username);
      expect(Number(response.headers['x-settee-cold-start'])).toBeGreaterThan(0);
      // The engine's own part of the released request, apart from the hold and the gateway's forward.
      expect(response.headers['server-timing']).toMatch(/^upstream;dur=\d+\.\d$/);
    }
    expect(wakeWrites.filter((w) => w.startsWith('sleepy@'))).toHaveLength(1);
    // Up: the requests' activity is reported after all, within an interval or so.
    await waitFor(async () => (sleepyRenewals().length > 0 ? true : undefined), 15_000);
    const metrics = (await request(`${gateway.url}/metrics`)).body;
    expect(metrics).toMatch(/^settee_gateway_wake_duration_seconds_count 1$/m);
    expect(metrics).toMatch(/^settee_gateway_wake_requests_total 1$/m);

    // Up now: the next request goes straight through, without the cold-start header.
    const warm = await request(`${gateway.url}/db/${namespace.name}/sleepy/_up`);
    expect(warm.status).toBe(200);
    expect(warm.headers['x-settee-cold-start']).toBeUndefined();
    expect(warm.headers['server-timing']).toBeUndefined();
  }, 90_000);

  it('when a wake cannot succeed, then held requests get 503 with Retry-After at the deadline, and overflow gets it at once', async () => {
    // Six at once for a hold queue of five: whichever arrives sixth overflows (which one that is
    // depends on the scheduling of this machine, so the answers are told apart by their time).
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => timed(request(`${strict.url}/db/${namespace.name}/never/`))),
    );
    const [overflow, ...held] = answers.sort((a, b) => a.at - b.at);
    expect(overflow!.response.status).toBe(503);
    expect(overflow!.response.headers['retry-after']).toBe('7');
    expect(overflow!.at - started).toBeLessThan(STRICT_WAKE_TIMEOUT_MS - 1_000);

    for (const { response, at } of held) {
      expect(response.status).toBe(503);
      expect(JSON.parse(response.body)).toMatchObject({ error: 'service_unavailable' });
      expect(response.headers['retry-after']).toBe('7');
      expect(at - started).toBeGreaterThanOrEqual(STRICT_WAKE_TIMEOUT_MS - 50);
      expect(at - started).toBeLessThan(STRICT_WAKE_TIMEOUT_MS + 5_000);
    }
    const metrics = (await request(`${strict.url}/metrics`)).body;
    expect(metrics).toMatch(/^settee_gateway_errors_total\{code="HOLD_QUEUE_FULL"\} 1$/m);
    expect(metrics).toMatch(/^settee_gateway_errors_total\{code="WAKE_TIMEOUT"\} 5$/m);
  });

  it('when the cached address refuses connections, then the request waits for the instance to come back instead of failing', async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'moved' };
    const pending = request(`${gateway.url}/db/${namespace.name}/moved/_up`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const engine = await startEngine('moved');
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: false });
    const response = await pending;
    expect(response.status).toBe(200);
  }, 90_000);

  it('when an instance is deleted while requests wait for it, then they get a 404', async () => {
    const { kubeConfig } = testControlPlane();
    const pending = request(`${gateway.url}/db/${namespace.name}/doomed/`);
    await waitFor(async () => (wakeWrites.some((w) => w.startsWith('doomed@')) ? true : undefined));
    await kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      plural: COUCH_INSTANCE_PLURAL,
      namespace: namespace.name,
      name: 'doomed',
    });
    const response = await pending;
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'not_found' });
  });

  it('when 200 requests arrive at once, then the activity Lease is written at most once per interval for them', async () => {
    const { kubeConfig } = testControlPlane();
    const before = await quietCount(); // earlier activity's renewals are over
    const echoRenewals = (): ActivityRenewal[] => renewals.filter((r) => r.instance.name === 'echo');
    const startedAt = Date.now();
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => request(`${gateway.url}/db/${namespace.name}/echo/burst/${i}`)),
    );
    const burstMs = Date.now() - startedAt;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const written = echoRenewals().slice(before);
    // The first at once, then at most one at the end of each 400 ms interval in which requests came
    // or ended: however long a loaded machine takes to serve the 200, never one write per request.
    expect(written.length).toBeGreaterThanOrEqual(1);
    expect(written.length).toBeLessThanOrEqual(1 + Math.ceil(burstMs / 400));
    const gaps = written
      .slice(1)
      .map((r, i) => r.renewTime.getTime() - (written[i] as ActivityRenewal).renewTime.getTime());
    expect(gaps.filter((ms) => ms < 399)).toEqual([]);

    const lease = await kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: activityLeaseName('echo'), namespace: namespace.name });
    expect(lease.metadata?.labels?.[LABEL_INSTANCE]).toBe('echo');
    expect(lease.spec?.holderIdentity).toBe('test-gateway');
    expect(lease.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CouchInstance', name: 'echo' });
    expect(Date.now() - new Date(lease.spec?.renewTime ?? 0).getTime()).toBeLessThan(5_000);
  });

  it('when a response stays open, then the Lease keeps being renewed every interval until it closes', async () => {
    const quiet = await quietCount();

    const stream = http.get(`${gateway.url}/db/${namespace.name}/echo/hold`);
    await new Promise((resolve) => stream.once('response', resolve));
    // The first at once, then one per interval with no request coming: only the open stream renews.
    await waitFor(async () => (count() - quiet >= 4 ? true : undefined), 15_000);
    expect(renewals.at(-1)?.openStreams).toBe(1);
    // Every interval, not just 4 within 15 s: the median gap between the renewals made while the
    // stream is open stays under two intervals (the median is robust to a timer run late).
    const open = renewals.filter((r) => r.instance.name === 'echo').slice(quiet);
    const gaps = open
      .slice(1)
      .map((r, i) => r.renewTime.getTime() - open[i]!.renewTime.getTime())
      .sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeLessThan(2 * ACTIVITY_INTERVAL_MS);

    stream.destroy();
    await quietCount();
  });
});

async function timed(pending: Promise<PlainResponse>): Promise<{ response: PlainResponse; at: number }> {
  const response = await pending;
  return { response, at: Date.now() };
}

async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
