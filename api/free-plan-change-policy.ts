import { SETTEE_GROUP, SETTEE_VERSION } from './contract.js';
import { COUCH_INSTANCE_PLURAL } from './couch-instance.js';

/**
 * paid -> free is refused while the instance is outside the free envelope, by the API server, with
 * the figures the platform is configured with: a ValidatingAdmissionPolicy whose parameters are a
 * ConfigMap (`storage`, a quantity such as 1Gi, and `databases`) that the chart renders from the
 * same values as the gateway's limits (freeEnvelope.storage, freeEnvelope.databases). A CRD rule
 * could only carry fixed figures: the API server cannot read the gateway's settings. The chart's
 * template (templates/free-plan-change-policy.yaml) holds these expressions too, and
 * test/integration/chart checks that they are the ones built here.
 */

export const FREE_ENVELOPE_PARAMS_KEYS = { storage: 'storage', databases: 'databases' } as const;

/** Only a move from paid to free is looked at; every other update passes without params. */
export const PLAN_MOVES_TO_FREE =
  "oldObject.spec.?plan.orValue('free') == 'paid' && object.spec.?plan.orValue('free') == 'free'";

const USAGE = 'object.status.usage';

/** Inside the free envelope as status.usage last measured it; an instance never measured is inside. */
export const WITHIN_FREE_ENVELOPE =
  `!has(object.status) || !has(${USAGE}) || ` +
  `((!has(${USAGE}.storageBytes) || ${USAGE}.storageBytes <= quantity(params.data.${FREE_ENVELOPE_PARAMS_KEYS.storage}).asInteger()) && ` +
  `(!has(${USAGE}.databases) || ${USAGE}.databases <= int(params.data.${FREE_ENVELOPE_PARAMS_KEYS.databases})))`;

export const OUTSIDE_FREE_ENVELOPE_MESSAGE =
  "'plan: free is refused while the instance is outside the free envelope (status.usage above ' + " +
  `params.data.${FREE_ENVELOPE_PARAMS_KEYS.storage} + ' stored or ' + params.data.${FREE_ENVELOPE_PARAMS_KEYS.databases} + ` +
  "' databases): delete data first, then change the plan'";

export interface FreePlanChangePolicyNames {
  /** The policy's and the binding's name (cluster-scoped). */
  policy: string;
  /** The params ConfigMap. */
  params: { namespace: string; name: string };
}

export function buildFreePlanChangePolicy(names: FreePlanChangePolicyNames) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: names.policy },
    spec: {
      failurePolicy: 'Fail',
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [SETTEE_GROUP],
            apiVersions: [SETTEE_VERSION],
            operations: ['UPDATE'],
            resources: [COUCH_INSTANCE_PLURAL],
          },
        ],
      },
      matchConditions: [{ name: 'plan-moves-to-free', expression: PLAN_MOVES_TO_FREE }],
      validations: [
        {
          expression: WITHIN_FREE_ENVELOPE,
          messageExpression: OUTSIDE_FREE_ENVELOPE_MESSAGE,
          reason: 'Invalid',
        },
      ],
    },
  };
}

/** `onlyNamespace`: bind the policy to one namespace's instances (tests); default every namespace. */
export function buildFreePlanChangeBinding(names: FreePlanChangePolicyNames, onlyNamespace?: string) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: names.policy },
    spec: {
      policyName: names.policy,
      ...(onlyNamespace === undefined
        ? {}
        : {
            matchResources: {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': onlyNamespace } },
            },
          }),
      // The API server resolves params before matchConditions, so Deny would refuse every update of
      // every CouchInstance (the gateway's wake requests too) while the ConfigMap is missing; the
      // chart renders it with the binding, so missing means deleted by hand, and only plan checks lapse.
      paramRef: { ...names.params, parameterNotFoundAction: 'Allow' },
      validationActions: ['Deny'],
    },
  };
}

export function buildFreeEnvelopeParams(
  names: FreePlanChangePolicyNames,
  figures: { storage: string; databases: number },
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...names.params },
    data: {
      [FREE_ENVELOPE_PARAMS_KEYS.storage]: figures.storage,
      [FREE_ENVELOPE_PARAMS_KEYS.databases]: String(figures.databases),
    },
  };
}
