import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  buildFreeEnvelopeParams,
  buildFreePlanChangeBinding,
  buildFreePlanChangePolicy,
} from '../../../api/free-plan-change-policy.js';
import { applyObject, makeObjectClient } from '../../../kube/apply.js';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstanceUsage } from '../../../api/couch-instance.js';
import { toKubeApiError } from '../../../kube/errors.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { createCouchInstance, replaceCouchInstanceStatus } from '../../helpers/gateway/gateway-harness.js';

/**
 * Plan changes against the real API server, the CRD's rules and the free-plan-change admission
 * policy (api/free-plan-change-policy.ts, installed by the control plane with the default figures,
 * as the chart installs it with its values): no operator is needed to refuse them.
 */
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

  describe('with figures configured otherwise (the policy bound to this namespace only)', () => {
    const names = {
      policy: '',
      params: { namespace: '', name: 'narrow-free-envelope' },
    };
    const objects = () => makeObjectClient(kubeConfig);
    const apply = (object: KubernetesObject) =>
      applyObject(objects(), object, { fieldManager: 'plan-change-test' });

    beforeAll(async () => {
      names.policy = `narrow-free-plan-change-${ns.name}`;
      names.params.namespace = ns.name;
      await apply(buildFreePlanChangePolicy(names));
      await apply(buildFreePlanChangeBinding(names, ns.name));
    });

    afterAll(async () => {
      for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'])
        await objects()
          .delete({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: names.policy } })
          .catch(() => undefined);
    });

    it('when the figures say 512Mi and 5 databases, then an instance inside the defaults but above them is refused with the configured figures, and one inside them may move', async () => {
      await apply(buildFreeEnvelopeParams(names, { storage: '512Mi', databases: 5 }));
      await paidInstanceWith('mid', { storageBytes: 800 * 2 ** 20, databases: 2 });
      await paidInstanceWith('dbs', { storageBytes: 1_000, databases: 6 });
      await paidInstanceWith('fits', { storageBytes: 512 * 2 ** 20, databases: 5 });
      const refused = await waitUntilRefused('mid');
      expect(refused).toContain(
        'plan: free is refused while the instance is outside the free envelope (status.usage above 512Mi stored or 5 databases)',
      );
      expect(await changePlan('dbs', 'free')).toContain('above 512Mi stored or 5 databases');
      expect(await changePlan('fits', 'free')).toBe('accepted');
    });

    it('when its params ConfigMap is deleted, then updates still pass (a wake request): the policy never blocks an instance for want of its figures', async () => {
      // After the case above, so this binding is known to be in force.
      await objects().delete(buildFreeEnvelopeParams(names, { storage: '512Mi', databases: 5 }));
      const wake = () =>
        kubeConfig.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
          {
            group: SETTEE_GROUP,
            version: SETTEE_VERSION,
            plural: COUCH_INSTANCE_PLURAL,
            namespace: ns.name,
            name: 'mid',
            body: { metadata: { annotations: { 'settee.dev/wake-requested': new Date().toISOString() } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      await wake();
      // The cluster-wide default policy (1Gi) still stands: a 5Gi instance may not move to free.
      await paidInstanceWith('huge', { storageBytes: 5 * 2 ** 30, databases: 1 });
      expect(await changePlan('huge', 'free')).toContain('above 1Gi stored');
    });

    /** The API server picks up a new policy or binding within a moment: ask until it answers. */
    async function waitUntilRefused(name: string): Promise<string> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const answer = await changePlan(name, 'free');
        if (answer !== 'accepted') return answer;
        if (Date.now() > deadline) throw new Error(`moving ${name} to free was accepted`);
        await changePlan(name, 'paid');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  });
});
