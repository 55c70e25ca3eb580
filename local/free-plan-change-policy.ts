import type { KubeConfig } from '@kubernetes/client-node';
import {
  buildFreeEnvelopeParams,
  buildFreePlanChangeBinding,
  buildFreePlanChangePolicy,
  type FreePlanChangePolicyNames,
} from '../api/free-plan-change-policy.js';
import { DEFAULT_FREE_ENVELOPE, DEFAULT_FREE_LIMITS } from '../api/free-envelope.js';
import { applyObject, makeObjectClient } from '../kube/apply.js';
import { waitFor } from './wait.js';

/** Where the local platform keeps the policy's figures: the chart keeps them in its release namespace. */
export const LOCAL_FREE_PLAN_CHANGE_POLICY: FreePlanChangePolicyNames = {
  policy: 'settee-free-plan-change',
  params: { namespace: 'default', name: 'settee-free-envelope' },
};

/**
 * What the chart installs beside the CRDs to refuse paid -> free outside the free envelope
 * (api/free-plan-change-policy.ts), with the default figures, which are what `make run`'s gateway
 * enforces. Waits until the API server has checked the policy's expressions.
 */
export async function installFreePlanChangePolicy(kubeConfig: KubeConfig): Promise<void> {
  const objects = makeObjectClient(kubeConfig);
  const names = LOCAL_FREE_PLAN_CHANGE_POLICY;
  const options = { fieldManager: 'settee-local' };
  await applyObject(
    objects,
    buildFreeEnvelopeParams(names, {
      storage: DEFAULT_FREE_ENVELOPE.storage,
      databases: DEFAULT_FREE_LIMITS.databases,
    }),
    options,
  );
  await applyObject(objects, buildFreePlanChangePolicy(names), options);
  await applyObject(objects, buildFreePlanChangeBinding(names), options);
  await waitFor(
    `ValidatingAdmissionPolicy ${names.policy} to be type-checked`,
    async () => {
      const policy = (await objects.read({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: names.policy },
      })) as { status?: { observedGeneration?: number } };
      return policy.status?.observedGeneration !== undefined ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}
