import type { KubernetesObject, V1Deployment, V1NetworkPolicy } from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import { buildPodLabels } from '../../../operator/resources/couch-instance/labels.js';
import { findObject, FULL_VALUES, renderChart } from '../../helpers/chart/chart-harness.js';
import { mayConnect } from '../../helpers/chart/network-policy-check.js';

/** The operator's pods and an instance pod as the operator's template labels it. */
function operatorMayReachInstances(objects: readonly KubernetesObject[]): boolean {
  const operator = findObject<V1Deployment>(objects, 'Deployment', /-operator$/);
  return mayConnect({
    objects,
    from: operator.spec?.template.metadata?.labels ?? {},
    to: buildPodLabels('app', '3.5.1'),
    port: COUCHDB_PORT,
  });
}

/*
 * An idle instance is asked for its replication jobs on its CouchDB port before it hibernates
 * (operator/controllers/couch-instance/replication-activity.ts): the chart's NetworkPolicies must
 * let the operator through, with the default values and with every value set.
 */
describe("the chart's NetworkPolicies and the operator's connections to instances", () => {
  it.each([
    ['the default values', []],
    ['every value set', [FULL_VALUES]],
  ])(
    'when rendered with %s, then the operator may reach an instance pod on the CouchDB port',
    async (_name, valuesFiles) => {
      const objects = await renderChart({
        release: 'prod',
        namespace: 'settee-system',
        valuesFiles,
        set: { watchNamespace: 'settee-system' },
      });
      expect(objects.some((o) => o.kind === 'NetworkPolicy')).toBe(true);
      expect(operatorMayReachInstances(objects)).toBe(true);
    },
  );

  it('when a policy isolated the operator for egress without a rule for CouchDB, then the check says it cannot reach instances', async () => {
    const objects = await renderChart({ release: 'prod', namespace: 'settee-system' });
    const operatorPolicy = findObject<V1NetworkPolicy>(objects, 'NetworkPolicy', /-operator$/);
    const isolated: V1NetworkPolicy = {
      ...operatorPolicy,
      spec: {
        ...operatorPolicy.spec,
        podSelector: operatorPolicy.spec?.podSelector ?? {},
        policyTypes: ['Egress'],
        egress: [],
      },
    };
    expect(operatorMayReachInstances([...objects.filter((o) => o !== operatorPolicy), isolated])).toBe(false);
  });
});
