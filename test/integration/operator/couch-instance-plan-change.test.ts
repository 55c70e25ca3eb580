import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstanceUsage } from '../../../api/couch-instance.js';
import { toKubeApiError } from '../../../kube/errors.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { createCouchInstance, replaceCouchInstanceStatus } from '../../helpers/gateway/gateway-harness.js';

/** Plan changes against the real API server and the CRD's rules: no operator is needed to refuse them. */
describe('changing a CouchInstance plan', () => {
  const ns = useTestNamespace('couch-plan');
  const { kubeConfig } = testControlPlane();

  /** The API server's answer to a merge patch of spec.plan: "accepted", or its 422 message. */
  async function changePlan(name: string, plan: 'free' | 'paid'): Promise<string> {
    try {
      await kubeConfig.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
        {
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          plural: COUCH_INSTANCE_PLURAL,
          namespace: ns.name,
          name,
          body: { spec: { plan } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return 'accepted';
    } catch (err) {
      const apiError = toKubeApiError(err);
      if (apiError?.statusCode !== 422) throw err;
      return apiError.message;
    }
  }

  async function paidInstanceWith(name: string, usage: CouchInstanceUsage | undefined): Promise<void> {
    await createCouchInstance(kubeConfig, { namespace: ns.name, name }, { plan: 'paid' });
    if (usage) await replaceCouchInstanceStatus(kubeConfig, { namespace: ns.name, name }, { usage });
  }

  it('when a paid instance holds more than the free storage, then moving it to free is refused with the reason', async () => {
    await paidInstanceWith('big', { storageBytes: 5 * 2 ** 30, databases: 2 });
    expect(await changePlan('big', 'free')).toContain(
      'plan: free is refused while the instance is outside the free envelope (status.usage above 1Gi stored or 20 databases)',
    );
  });

  it('when a paid instance holds more databases than the free limit, then moving it to free is refused', async () => {
    await paidInstanceWith('many', { storageBytes: 1_000, databases: 21 });
    expect(await changePlan('many', 'free')).toContain('plan: free is refused');
  });

  it('when a paid instance is inside the free envelope, or was never measured, then it may move to free and back', async () => {
    await paidInstanceWith('small', { storageBytes: 2 ** 30, databases: 20 });
    expect(await changePlan('small', 'free')).toBe('accepted');
    expect(await changePlan('small', 'paid')).toBe('accepted');
    await paidInstanceWith('fresh', undefined);
    expect(await changePlan('fresh', 'free')).toBe('accepted');
  });

  it('when a free instance is above the free envelope, then moving it to paid is accepted: upgrades are never refused', async () => {
    await createCouchInstance(kubeConfig, { namespace: ns.name, name: 'over' }, { plan: 'free' });
    await replaceCouchInstanceStatus(
      kubeConfig,
      { namespace: ns.name, name: 'over' },
      { usage: { storageBytes: 5 * 2 ** 30, databases: 40 } },
    );
    expect(await changePlan('over', 'paid')).toBe('accepted');
  });
});
