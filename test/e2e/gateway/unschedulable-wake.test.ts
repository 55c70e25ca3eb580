import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../../api/couch-instance.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request, type PlainResponse } from '../../helpers/gateway/http-request.js';
import {
  readAdminCredentials,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/** Far longer than an answer that does not wait for the wake timeout takes. */
const WAKE_TIMEOUT_MS = 20_000;
const FAST_MS = 5_000;
const readyReason = (instance: CouchInstance) =>
  instance.status?.conditions?.find((c) => c.type === 'Ready')?.reason;

/**
 * An instance the real scheduler cannot place (region pinning to a region no node has): the
 * gateway answers its requests with a 503 at once, naming the scheduler's reason, instead of
 * holding them until the wake timeout. The platform: real operator, gateway, kubelet stand-in with
 * the two test nodes (regions test-region-a and test-region-b), real kube-scheduler.
 */
describe('a request for an instance whose pod cannot be scheduled', () => {
  const namespace = useTestNamespace('e2e-unschedulable');
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform({
      kubeConfig: testControlPlane().kubeConfig,
      namespace: namespace.name,
      gatewayEnv: { SETTEE_GATEWAY_WAKE_TIMEOUT: `${WAKE_TIMEOUT_MS}ms` },
    });
  }, 60_000);
  afterAll(() => platform?.stop());

  async function timedGet(ref: { namespace: string; name: string }, url: string) {
    const admin = await readAdminCredentials(testControlPlane().kubeConfig, ref);
    const started = Date.now();
    const response = await request(url, {
      headers: { Authorization: basicAuth(admin.username, admin.password) },
    });
    return { response, tookMs: Date.now() - started };
  }

  function expectSchedulingRefusal(response: PlainResponse, scheduler: RegExp): void {
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toBe('application/json');
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    const body = JSON.parse(response.body) as { error: string; reason: string };
    expect(body.error).toBe('service_unavailable');
    expect(body.reason).toContain('its pod cannot be scheduled');
    expect(body.reason).toMatch(scheduler);
  }

  it('when it is pinned to a region no node has, then its first request gets a 503 with the scheduler reason at once', async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'nowhere' };
    await createCouchInstance(kubeConfig, ref, {
      plan: 'paid',
      addons: { regionPinning: { region: 'nowhere-1' } },
    });
    const instance = await waitForInstance(kubeConfig, ref, (i) => readyReason(i) === 'Unschedulable');
    const { response, tookMs } = await timedGet(ref, `${instance.status?.endpoint ?? ''}/`);
    expectSchedulingRefusal(response, /node affinity/);
    expect(tookMs).toBeLessThan(FAST_MS);
  }, 60_000);

  it('when a hibernated instance is re-pinned to a region no node has, then the request that wakes it gets the 503 quickly, not at the wake timeout', async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: namespace.name, name: 'moved' };
    const region = TEST_NODES[0]?.region ?? '';
    await createCouchInstance(kubeConfig, ref, {
      plan: 'paid',
      hibernation: { idleAfter: '2s' },
      addons: { regionPinning: { region } },
    });
    const hibernated = await waitForInstance(
      kubeConfig,
      ref,
      (i) => i.status?.phase === 'Hibernated',
      // Its first start (an engine run by the kubelet stand-in), idle 2 s, then its pod deleted.
      60_000,
    );
    await kubeConfig.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: COUCH_INSTANCE_PLURAL,
        namespace: ref.namespace,
        name: ref.name,
        body: { spec: { addons: { regionPinning: { region: 'nowhere-1' } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const { response, tookMs } = await timedGet(ref, `${hibernated.status?.endpoint ?? ''}/`);
    // The volume stays on its node in the first region: node affinity, or the volume's, refuses.
    expectSchedulingRefusal(response, /affinity/);
    expect(tookMs).toBeLessThan(FAST_MS + 5_000);
    const woken = await waitForInstance(kubeConfig, ref, (i) => readyReason(i) === 'Unschedulable');
    expect(woken.status?.phase).toBe('Waking');
  }, 120_000);
});
