import crypto from 'node:crypto';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { activityLeaseName, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL } from '../../../api/couch-instance.js';
import { parseRequestUsage } from '../../../api/request-usage.js';
import type { Gateway } from '../../../gateway/gateway.js';
import { provisionTenant } from '../../../local/tenant-access.js';
import { kubeConfigWithToken } from '../../helpers/console/console-harness.js';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway/echo-upstream.js';
import { startGatewayInFrontOf } from '../../helpers/gateway/gateway-harness.js';
import { request } from '../../helpers/gateway/http-request.js';
import { testControlPlane } from '../../helpers/kube.js';

/**
 * The request counts a tenant is billed on live in its own namespace (the activity Lease, then
 * status.usage), so a tenant must not be able to write either: with the tenant Role
 * (local/tenant-access.ts, what make run and the console's tests grant), tenant A can read its
 * instance but neither edit nor delete the counts, and tenant B cannot even read A's.
 */
describe('tenants and the request counts they are billed on', () => {
  const suffix = crypto.randomBytes(3).toString('hex');
  const tenantA = { namespace: `usage-a-${suffix}`, serviceAccount: 'alice' };
  const tenantB = { namespace: `usage-b-${suffix}`, serviceAccount: 'bob' };
  const { kubeConfig: admin } = testControlPlane();
  let upstream: EchoUpstream;
  let gateway: Gateway;
  let asA: ReturnType<typeof kubeConfigWithToken>;
  let asB: ReturnType<typeof kubeConfigWithToken>;
  const instanceRef = { group: SETTEE_GROUP, version: SETTEE_VERSION, plural: COUCH_INSTANCE_PLURAL };

  beforeAll(async () => {
    asA = kubeConfigWithToken(admin, (await provisionTenant(admin, tenantA)).token);
    asB = kubeConfigWithToken(admin, (await provisionTenant(admin, tenantB)).token);
    upstream = await startEchoUpstream();
    let base: string;
    ({ gateway, base } = await startGatewayInFrontOf({
      kubeConfig: admin,
      namespace: tenantA.namespace,
      name: 'billed',
      port: upstream.port,
      env: { SETTEE_GATEWAY_USAGE_INTERVAL: '200ms' },
    }));
    for (let i = 0; i < 3; i++) await request(`${base}/db/doc-${i}`);
    const coordination = admin.makeApiClient(CoordinationV1Api);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const lease = await coordination
        .readNamespacedLease({ namespace: tenantA.namespace, name: activityLeaseName('billed') })
        .catch(() => undefined);
      if (parseRequestUsage(lease?.metadata?.annotations).entries.length > 0) break;
      if (Date.now() > deadline) throw new Error('the gateway wrote no request counts');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    const core = admin.makeApiClient(CoreV1Api);
    for (const { namespace } of [tenantA, tenantB])
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('when tenant A reaches for its own counts, then it may read its instance but the API server refuses editing or deleting the Lease and writing status', async () => {
    const custom = asA.makeApiClient(CustomObjectsApi);
    await expect(
      custom.getNamespacedCustomObject({ ...instanceRef, namespace: tenantA.namespace, name: 'billed' }),
    ).resolves.toMatchObject({ metadata: { name: 'billed' } });
    const coordination = asA.makeApiClient(CoordinationV1Api);
    const lease = { namespace: tenantA.namespace, name: activityLeaseName('billed') };
    await expect(
      coordination.patchNamespacedLease(
        { ...lease, body: { metadata: { annotations: { 'usage.settee.dev/2026-01-01.forged': null } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    ).rejects.toMatchObject({ code: 403 });
    await expect(coordination.deleteNamespacedLease(lease)).rejects.toMatchObject({ code: 403 });
    await expect(
      custom.patchNamespacedCustomObjectStatus(
        {
          ...instanceRef,
          namespace: tenantA.namespace,
          name: 'billed',
          body: { status: { usage: { requests: { read: 0, write: 0, query: 0 } } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    ).rejects.toMatchObject({ code: 403 });
  });

  it("when tenant B asks for A's instance or Lease, then the API server refuses it", async () => {
    await expect(
      asB
        .makeApiClient(CustomObjectsApi)
        .getNamespacedCustomObject({ ...instanceRef, namespace: tenantA.namespace, name: 'billed' }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(
      asB
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ namespace: tenantA.namespace, name: activityLeaseName('billed') }),
    ).rejects.toMatchObject({ code: 403 });
  });
});
