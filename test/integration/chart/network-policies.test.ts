import type {
  KubernetesObject,
  V1Deployment,
  V1LabelSelector,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
} from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import { buildPodLabels } from '../../../operator/resources/couch-instance/labels.js';
import { findObject, FULL_VALUES, renderChart } from './chart-harness.js';

type Labels = Record<string, string>;
/** Rendered YAML says `from`; client-node's type calls it `_from` (its serializer renames it). */
type IngressRule = Omit<V1NetworkPolicyIngressRule, '_from'> & { from?: V1NetworkPolicyPeer[] };

/** matchLabels only: the chart's policies use nothing else, and anything more fails here visibly. */
function selects(selector: V1LabelSelector | undefined, labels: Labels): boolean {
  if (selector?.matchExpressions?.length) throw new Error('matchExpressions are not evaluated by this test');
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

const allowsPort = (ports: V1NetworkPolicyPort[] | undefined, port: number): boolean =>
  !ports?.length || ports.some((p) => p.port === port && (p.protocol ?? 'TCP') === 'TCP');

/**
 * Whether the rendered policies let the operator's pods open a connection to an instance pod's
 * CouchDB port, as Kubernetes evaluates them (isolated only by policies that select the pod with
 * that policy type; any rule of any of them allowing it is enough). The instance pod is assumed
 * to share the policies' namespace, the strictest case (watchNamespace set to the release's).
 */
function operatorMayReachInstances(objects: readonly KubernetesObject[]): boolean {
  const policies = objects.filter((o): o is V1NetworkPolicy => o.kind === 'NetworkPolicy');
  const operator = findObject<V1Deployment>(objects, 'Deployment', /-operator$/);
  const operatorLabels: Labels = operator.spec?.template.metadata?.labels ?? {};
  const instanceLabels = buildPodLabels('app', '3.5.1');

  const egress = policies.filter(
    (p) => p.spec?.policyTypes?.includes('Egress') && selects(p.spec.podSelector, operatorLabels),
  );
  const egressAllowed =
    egress.length === 0 ||
    egress.some((p) =>
      (p.spec?.egress ?? []).some(
        (rule) =>
          allowsPort(rule.ports, COUCHDB_PORT) &&
          (!rule.to?.length || rule.to.some((peer) => selects(peer.podSelector, instanceLabels))),
      ),
    );
  const ingress = policies.filter(
    (p) => p.spec?.policyTypes?.includes('Ingress') && selects(p.spec.podSelector, instanceLabels),
  );
  const ingressAllowed =
    ingress.length === 0 ||
    ingress.some((p) =>
      ((p.spec?.ingress ?? []) as IngressRule[]).some(
        (rule) =>
          allowsPort(rule.ports, COUCHDB_PORT) &&
          (!rule.from?.length || rule.from.some((peer) => selects(peer.podSelector, operatorLabels))),
      ),
    );
  return egressAllowed && ingressAllowed;
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
