/**
 * The resource envelope of the free plan. The CRD's validation rules carry these values (the API
 * server cannot read the operator's configuration); the operator's configuration may narrow them,
 * and then reports instances outside its envelope through the Degraded condition.
 */
export interface FreeEnvelope {
  /** Largest storage.size; more needs plan: paid with addons.largerStorage. */
  storage: string;
  /** Largest cpu request or limit. */
  cpu: string;
  /** Largest memory request or limit. */
  memory: string;
}

export const DEFAULT_FREE_ENVELOPE: Readonly<FreeEnvelope> = Object.freeze({
  storage: '1Gi',
  cpu: '1',
  memory: '1Gi',
});

/**
 * The free plan's usage limits, enforced by the gateway (gateway/envelope/) and the operator; the
 * defaults of their settings, after IBM Cloudant Lite's (20 reads, 10 writes and 5 queries a
 * second, 20 databases). docs/free-envelope.md explains each.
 */
export const DEFAULT_FREE_LIMITS = Object.freeze({
  readsPerSecond: 20,
  writesPerSecond: 10,
  queriesPerSecond: 5,
  databases: 20,
  /** Free CouchInstances per namespace (the chart's ResourceQuota, and the operator where there is none). */
  instancesPerNamespace: 5,
});

/** What an instance gets when spec.resources leaves a value out; inside the free envelope. */
export const DEFAULT_INSTANCE_RESOURCES = Object.freeze({
  requests: Object.freeze({ cpu: '100m', memory: '256Mi' }),
  limits: Object.freeze({ cpu: '500m', memory: '512Mi' }),
});
