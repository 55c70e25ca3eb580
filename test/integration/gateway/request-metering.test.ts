import { CoordinationV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { activityLeaseName, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import {
  addRequestCounts,
  parseRequestUsage,
  utcDay,
  ZERO_REQUEST_COUNTS,
  type RequestCounts,
} from '../../../api/request-usage.js';
import { foldRequestUsage } from '../../../operator/controllers/couch-instance/request-usage.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf, startTestGateway } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { clearOfUtcMidnight } from '../../helpers/clock-boundary.js';

/** `name{labels} value` lines of a Prometheus exposition whose labels include every pair given. */
function sampleOf(metrics: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = metrics
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && wanted.every((pair) => l.includes(pair)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** The gateway's per-instance request and byte counters, through the real gateway and API server. */
describe('the gateway meters requests and bytes per instance', () => {
  const namespace = useTestNamespace('gw-meter');
  const { kubeConfig } = testControlPlane();
  let upstream: EchoUpstream;
  let gateway: Gateway;
  let base: string;
  const labels = () => ({ namespace: namespace.name, instance: 'metered' });
  const scrape = async (g: Gateway): Promise<string> => (await request(`${g.url}/metrics`)).body;

  beforeAll(async () => {
    upstream = await startEchoUpstream();
    ({ gateway, base } = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'metered',
      port: upstream.port,
    }));
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  it('when requests of each class are sent, then the counters say how many of each and how many body bytes went each way, and a restarted replica counts from zero', async () => {
    let bytesOut = 0;
    const send = async (method: string, path: string, body?: string) => {
      const answer = await request(`${base}${path}`, {
        method,
        ...(body === undefined ? {} : { body, headers: { 'Content-Type': 'application/json' } }),
      });
      bytesOut += Buffer.byteLength(answer.body);
    };
    for (let i = 0; i < 5; i++) await send('GET', `/db/doc-${i}`);
    for (let i = 0; i < 3; i++) await send('PUT', `/db/doc-${i}`, '{"n":12345}');
    // A chunked upload has no Content-Length: its bytes are counted as they stream.
    const chunked = await request(`${base}/db/doc-chunked`, {
      method: 'PUT',
      body: '{"chunked":true}',
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    bytesOut += Buffer.byteLength(chunked.body);
    await send('POST', '/db/_find', '{"selector":{}}');
    await send('GET', '/db/_design/d/_view/v');

    const metrics = await scrape(gateway);
    const requests = (cls: string) =>
      sampleOf(metrics, 'settee_gateway_instance_requests_total', { ...labels(), class: cls });
    expect([requests('read'), requests('write'), requests('query')]).toEqual([5, 4, 2]);
    expect(
      sampleOf(metrics, 'settee_gateway_instance_body_bytes_total', { ...labels(), direction: 'in' }),
    ).toBe(3 * 11 + 16 + 15);
    expect(
      sampleOf(metrics, 'settee_gateway_instance_body_bytes_total', { ...labels(), direction: 'out' }),
    ).toBe(bytesOut);

    // A replica that restarts starts its counters again; Prometheus's increase() reads the drop as
    // a reset, so the totals over both lives add up to what was sent.
    await gateway.stop();
    gateway = await startTestGateway({ kubeConfig, namespace: namespace.name });
    base = `${gateway.url}/db/${namespace.name}/metered`;
    for (let i = 0; i < 4; i++) await send('GET', `/db/again-${i}`);
    const after = await scrape(gateway);
    expect(sampleOf(after, 'settee_gateway_instance_requests_total', { ...labels(), class: 'read' })).toBe(4);
    expect(
      sampleOf(after, 'settee_gateway_instance_requests_total', { ...labels(), class: 'write' }),
    ).toBeUndefined();
  });

  it('when the instance is deleted, then its series go', async () => {
    await request(`${base}/db/last`);
    expect(await scrape(gateway)).toContain(`instance="metered"`);
    await kubeConfig.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      plural: COUCH_INSTANCE_PLURAL,
      namespace: namespace.name,
      name: 'metered',
    });
    const deadline = Date.now() + 10_000;
    while ((await scrape(gateway)).includes(`instance="metered"`)) {
      if (Date.now() > deadline) throw new Error('the series stayed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});

/**
 * The counts kept in the Kubernetes API (docs/metering.md): two gateway replicas serve one instance,
 * one of them restarts, and the activity Lease must hold each process's counts of the day under its
 * own key, adding up to every request once, which is what the operator sums into status.usage.
 */
describe('gateway replicas keep their request counts in the activity Lease', () => {
  const namespace = useTestNamespace('gw-usage');
  const { kubeConfig } = testControlPlane();
  const env = { SETTEE_GATEWAY_USAGE_INTERVAL: '200ms' };
  let upstream: EchoUpstream;
  const gateways: Gateway[] = [];

  beforeAll(async () => {
    upstream = await startEchoUpstream();
  });

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await upstream?.close();
  });

  async function leaseCounts(): Promise<{
    writers: number;
    sum: RequestCounts;
    annotations: Record<string, string>;
  }> {
    const lease = await kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({
      namespace: namespace.name,
      name: activityLeaseName('shared'),
    });
    const annotations = lease.metadata?.annotations ?? {};
    const { entries } = parseRequestUsage(annotations);
    return {
      writers: new Set(entries.map((e) => e.writerId)).size,
      sum: entries.reduce((sum, e) => addRequestCounts(sum, e.counts), { ...ZERO_REQUEST_COUNTS }),
      annotations,
    };
  }

  it('when two replicas serve one instance and one restarts, then the Lease holds each process’s counts and their sum is every request once', async () => {
    // The gateways count by their own clock's UTC day and "today" below is all ten requests: UTC
    // midnight passing during the test (which takes under 20 s) would rightly split them.
    await clearOfUtcMidnight(30_000);
    const first = await startGatewayInFrontOf({
      kubeConfig,
      namespace: namespace.name,
      name: 'shared',
      port: upstream.port,
      env,
    });
    gateways.push(first.gateway);
    let second = await startTestGateway({ kubeConfig, namespace: namespace.name, env });
    gateways.push(second);
    const at = (g: Gateway, path: string) => `${g.url}${first.basePath}${path}`;
    const body = '{"n":1}';
    const put = { method: 'PUT', body, headers: { 'Content-Type': 'application/json' } };

    for (let i = 0; i < 5; i++) await request(at(first.gateway, `/db/r-${i}`));
    for (let i = 0; i < 3; i++) await request(at(second, `/db/w-${i}`), put);
    // The second replica stops gracefully (its last counts are written) and comes back as a new process.
    await second.stop();
    gateways.splice(gateways.indexOf(second), 1);
    second = await startTestGateway({ kubeConfig, namespace: namespace.name, env });
    gateways.push(second);
    for (let i = 0; i < 2; i++) await request(at(second, '/db/_find'), { ...put, method: 'POST' });

    const expected = { read: 5, write: 3, query: 2, bytesIn: 5 * body.length };
    const deadline = Date.now() + 10_000;
    let seen = await leaseCounts();
    while (
      seen.sum.read !== expected.read ||
      seen.sum.write !== expected.write ||
      seen.sum.query !== expected.query
    ) {
      if (Date.now() > deadline) throw new Error(`the Lease says ${JSON.stringify(seen.sum)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      seen = await leaseCounts();
    }
    expect(seen.sum.bytesIn).toBe(expected.bytesIn);
    expect(seen.sum.bytesOut).toBeGreaterThan(0);
    // Three processes (the first, the second before and after its restart), one key each.
    expect(seen.writers).toBe(3);
    // Repeated writes (every 200 ms) change nothing: the counts are cumulative per process.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await leaseCounts()).sum).toEqual(seen.sum);
    // What the operator makes of this Lease (its pure fold over the real annotations).
    const fold = foldRequestUsage({ annotations: seen.annotations, previous: undefined, now: Date.now() });
    expect(fold.figures.requests).toEqual({ read: 5, write: 3, query: 2 });
    expect(fold.figures.today?.date).toBe(utcDay(Date.now()));
    expect(fold.figures.today?.requests).toBe(10);
  }, 90_000);
});
