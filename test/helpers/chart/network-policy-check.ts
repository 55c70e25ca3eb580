import type {
  KubernetesObject,
  V1LabelSelector,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicyPort,
} from '@kubernetes/client-node';

export type Labels = Record<string, string>;
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
 * Whether the rendered NetworkPolicies let a pod labelled `from` open a TCP connection to a pod
 * labelled `to` on `port`, as Kubernetes evaluates them (a pod is isolated only by policies that
 * select it with that policy type; any rule of any of them allowing it is enough). Both pods are
 * taken to share the policies' namespace, the strictest case (watchNamespace set to the release's):
 * no CNI enforces policies on this machine's loopback pods, so the test evaluates them.
 */
export function mayConnect(options: {
  objects: readonly KubernetesObject[];
  from: Labels;
  to: Labels;
  port: number;
}): boolean {
  const { from, to, port } = options;
  const policies = options.objects.filter((o): o is V1NetworkPolicy => o.kind === 'NetworkPolicy');
  const egress = policies.filter(
    (p) => p.spec?.policyTypes?.includes('Egress') && selects(p.spec.podSelector, from),
  );
  const egressAllowed =
    egress.length === 0 ||
    egress.some((p) =>
      (p.spec?.egress ?? []).some(
        (rule) =>
          allowsPort(rule.ports, port) &&
          (!rule.to?.length || rule.to.some((peer) => selects(peer.podSelector, to))),
      ),
    );
  const ingress = policies.filter(
    (p) => p.spec?.policyTypes?.includes('Ingress') && selects(p.spec.podSelector, to),
  );
  const ingressAllowed =
    ingress.length === 0 ||
    ingress.some((p) =>
      ((p.spec?.ingress ?? []) as IngressRule[]).some(
        (rule) =>
          allowsPort(rule.ports, port) &&
          (!rule.from?.length || rule.from.some((peer) => selects(peer.podSelector, from))),
      ),
    );
  return egressAllowed && ingressAllowed;
}
