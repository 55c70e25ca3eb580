import type { KubernetesObject } from '@kubernetes/client-node';

/** JSON Schema as the API server reads it (client-node's JsonSchema renames some keys). */
type JsonSchema = { [keyword: string]: unknown };

const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties,
});
const string: JsonSchema = { type: 'string' };
const labelSelector: JsonSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/**
 * A namespaced monitoring.coreos.com/v1 CRD of this kind whose objects hold `spec` and nothing
 * else: the API server's strict field validation refuses any other field the chart might render.
 */
function standInCrd(kind: string, spec: JsonSchema): KubernetesObject & { spec: JsonSchema } {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: object({ apiVersion: string, kind: string, metadata: { type: 'object' }, spec }),
          },
        },
      ],
    },
  };
}

/**
 * Stand-in for the Prometheus Operator's ServiceMonitor CRD, which this machine cannot download:
 * the same group, version, kind and scope, with a structural schema of the fields the chart sets
 * (and only those), so the API server's strict field validation refuses any other field the chart
 * might render by mistake. It does not check what the real CRD adds beyond those fields.
 */
export function buildServiceMonitorStandInCrd(): KubernetesObject & { spec: JsonSchema } {
  return standInCrd('ServiceMonitor', {
    ...object({
      selector: labelSelector,
      namespaceSelector: object({
        any: { type: 'boolean' },
        matchNames: { type: 'array', items: string },
      }),
      endpoints: {
        type: 'array',
        items: object({
          port: string,
          path: string,
          scheme: { type: 'string', enum: ['http', 'https'] },
          interval: string,
          scrapeTimeout: string,
          tlsConfig: object({ insecureSkipVerify: { type: 'boolean' } }),
        }),
      },
    }),
    required: ['selector', 'endpoints'],
  });
}

/**
 * Stand-in for the Prometheus Operator's PrometheusRule CRD, on the same terms as the
 * ServiceMonitor's above: the fields of a rule group and of a rule, and no others.
 */
export function buildPrometheusRuleStandInCrd(): KubernetesObject & { spec: JsonSchema } {
  const stringMap: JsonSchema = { type: 'object', additionalProperties: string };
  return standInCrd(
    'PrometheusRule',
    object({
      groups: {
        type: 'array',
        items: {
          ...object({
            name: string,
            rules: {
              type: 'array',
              items: {
                ...object({
                  alert: string,
                  expr: { 'x-kubernetes-int-or-string': true },
                  for: string,
                  labels: stringMap,
                  annotations: stringMap,
                }),
                required: ['expr'],
              },
            },
          }),
          required: ['name', 'rules'],
        },
      },
    }),
  );
}
