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

/** What an instance gets when spec.resources leaves a value out; inside the free envelope. */
export const DEFAULT_INSTANCE_RESOURCES = Object.freeze({
  requests: Object.freeze({ cpu: '100m', memory: '256Mi' }),
  limits: Object.freeze({ cpu: '500m', memory: '512Mi' }),
});
