import { CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf, startTestGateway } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

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
    await send('POST', '/db/_find', '{"selector":{}}');
    await send('GET', '/db/_design/d/_view/v');

    const metrics = await scrape(gateway);
    const requests = (cls: string) =>
      sampleOf(metrics, 'settee_gateway_instance_requests_total', { ...labels(), class: cls });
    expect([requests('read'), requests('write'), requests('query')]).toEqual([5, 3, 2]);
    expect(
      sampleOf(metrics, 'settee_gateway_instance_body_bytes_total', { ...labels(), direction: 'in' }),
    ).toBe(3 * 11 + 15);
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
