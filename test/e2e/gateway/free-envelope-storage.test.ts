import crypto from 'node:crypto';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { request, type PlainResponse } from '../../helpers/gateway/http-request.js';
import {
  createServingInstance,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

const LIMIT_BYTES = 256 * 1024;
const usageOf = (instance: CouchInstance): number | undefined => instance.status?.usage?.storageBytes;

/**
 * The storage limit end to end: the operator measures a real engine's databases into
 * status.usage, and the gateway refuses writes once that is above a test-sized limit (256Ki),
 * keeps serving reads and deletes, and accepts writes again once deletes bring it back under.
 */
describe('a free instance filled past the storage limit', () => {
  const namespace = useTestNamespace('e2e-storage');
  const ref = { namespace: '', name: 'quota' };
  const { kubeConfig } = testControlPlane();
  let platform: TestPlatform;
  let base: string;
  let auth: string;

  const call = (method: string, path: string, body?: unknown): Promise<PlainResponse> =>
    request(`${base}${path}`, {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    ref.namespace = namespace.name;
    platform = await startTestPlatform({
      kubeConfig,
      namespace: namespace.name,
      gatewayEnv: { SETTEE_GATEWAY_FREE_STORAGE: '256Ki' },
      operatorEnv: { SETTEE_USAGE_MEASURE_INTERVAL: '1s' },
    });
    ({ endpoint: base, auth } = await createServingInstance(kubeConfig, ref, {
      plan: 'free',
      hibernation: { idleAfter: '10m' },
    }));
  }, 90_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('when it is measured above the limit, then writes get 402, reads and deletes work, and writes resume once deletes bring it under', async () => {
    expect((await call('PUT', '/keep')).status).toBe(201);
    expect((await call('PUT', '/bulk')).status).toBe(201);
    // Incompressible: Apache CouchDB compresses document bodies (snappy), so a repeated letter would
    // take almost no room in its file.
    const docs = Array.from({ length: 40 }, (_, i) => ({
      _id: `d${i}`,
      pad: crypto.randomBytes(7_500).toString('base64'),
    }));
    expect((await call('POST', '/bulk/_bulk_docs', { docs })).status).toBe(201);

    const measured = await waitForInstance(
      kubeConfig,
      ref,
      (instance) => (usageOf(instance) ?? 0) > LIMIT_BYTES,
    );
    expect(measured.status?.usage?.databases).toBe(2);
    expect(measured.status?.conditions?.find((c) => c.type === 'UsageMeasured')).toMatchObject({
      status: 'True',
      reason: 'Measured',
    });

    await waitUntil(async () => (await call('PUT', '/keep/blocked', { n: 1 })).status === 402);
    const refused = await call('POST', '/bulk/_bulk_docs', { docs: [{ n: 2 }] });
    expect(refused.status).toBe(402);
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'over_data_quota' });
    expect(JSON.parse(refused.body).reason).toContain('storage limit of 256Ki');

    const read = await call('GET', '/bulk/d1');
    expect(read.status).toBe(200);
    const rev = (JSON.parse(read.body) as { _rev: string })._rev;
    expect((await call('DELETE', `/bulk/d1?rev=${rev}`)).status).toBe(200);
    expect((await call('POST', '/bulk/_compact', {})).status).toBe(202);
    // The PouchDB-based engine's files do not shrink on compaction (CouchDB's do): deleting the
    // database is what brings this one under.
    expect((await call('DELETE', '/bulk')).status).toBe(200);

    await waitForInstance(kubeConfig, ref, (instance) => (usageOf(instance) ?? Infinity) <= LIMIT_BYTES);
    await waitUntil(async () => (await call('PUT', '/keep/accepted', { n: 3 })).status === 201);
  }, 60_000);
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
