import type { KubernetesObject } from '@kubernetes/client-node';
import {
  buildFreeEnvelopeParams,
  buildFreePlanChangeBinding,
  buildFreePlanChangePolicy,
} from '../../../api/free-plan-change-policy.js';
import { FULL_VALUES, renderChart } from '../../helpers/chart/chart-harness.js';

const RELEASE_NAMESPACE = 'settee-system';
const byKind = (objects: readonly KubernetesObject[], kind: string) =>
  objects.filter((o) => o.kind === kind && o.metadata?.name?.includes('free-'));

/**
 * The chart's free-plan-change policy must be the one api/free-plan-change-policy.ts builds (which
 * test/integration/operator/couch-instance-plan-change.test.ts runs against the real API server),
 * with the figures of its values.
 */
describe("the chart's free-plan-change admission policy", () => {
  it('when rendered with freeEnvelope.storage 512Mi and databases 50, then the params ConfigMap carries them and the policy and binding are the builder’s', async () => {
    const objects = await renderChart({
      release: 'prod',
      namespace: RELEASE_NAMESPACE,
      valuesFiles: [FULL_VALUES],
    });
    const names = {
      policy: 'prod-couch-free-plan-change',
      params: { namespace: RELEASE_NAMESPACE, name: 'prod-couch-free-envelope' },
    };
    const [params] = byKind(objects, 'ConfigMap');
    const [policy] = byKind(objects, 'ValidatingAdmissionPolicy');
    const [binding] = byKind(objects, 'ValidatingAdmissionPolicyBinding');
    const expectedParams = buildFreeEnvelopeParams(names, { storage: '512Mi', databases: 50 });
    expect(params).toMatchObject({ metadata: expectedParams.metadata, data: expectedParams.data });
    const specOf = (o: KubernetesObject | undefined) => (o as unknown as { spec: unknown } | undefined)?.spec;
    expect(specOf(policy)).toEqual(buildFreePlanChangePolicy(names).spec);
    // Every namespace served: the binding applies to every instance.
    expect(specOf(binding)).toEqual(buildFreePlanChangeBinding(names).spec);
  });

  it('when one namespace is watched, then the binding applies to that namespace’s instances only', async () => {
    const objects = await renderChart({
      release: 'prod',
      namespace: RELEASE_NAMESPACE,
      set: { watchNamespace: 'team-a' },
    });
    const [binding] = byKind(objects, 'ValidatingAdmissionPolicyBinding');
    const names = {
      policy: 'prod-settee-free-plan-change',
      params: { namespace: RELEASE_NAMESPACE, name: 'prod-settee-free-envelope' },
    };
    expect((binding as unknown as { spec: unknown }).spec).toEqual(
      buildFreePlanChangeBinding(names, 'team-a').spec,
    );
  });

  it('when freeEnvelope.planChangePolicy is false (a cluster older than 1.30), then none of it is rendered', async () => {
    const objects = await renderChart({
      release: 'prod',
      namespace: RELEASE_NAMESPACE,
      set: { 'freeEnvelope.planChangePolicy': 'false' },
    });
    expect(objects.filter((o) => o.kind?.startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
  });
});
