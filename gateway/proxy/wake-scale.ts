import { statefulSetName } from '../../api/contract.js';
import { ConditionType } from '../../api/conditions.js';
import type { CouchInstance } from '../../api/couch-instance.js';
import type { ObjectClient } from '../../kube/apply.js';
import { callKube } from '../../kube/errors.js';
import { GATEWAY_FIELD_MANAGER } from '../field-manager.js';
import type { InstanceRef } from '../instance-ref.js';

/** Scales a hibernated instance's StatefulSet to 1; separate so tests can count and hold the writes. */
export type WakeScaleWriter = (instance: InstanceRef) => Promise<void>;

/**
 * Whether the gateway may start the instance's pod itself, beside its wake request: only when the
 * operator would answer that request by doing the same. The status must say the operator hibernated
 * this very spec (phase Hibernated, computed from the current generation: a spec changed since may
 * be one it refuses, and an invalid spec or a full namespace gets no StatefulSet from it at all) and
 * that nothing is wrong with it (Degraded not True); a deleted instance is never started. Any doubt
 * leaves the wake to the operator, which the annotation asks for all the same.
 */
export function mayScaleForWake(instance: CouchInstance): boolean {
  const { metadata, status } = instance;
  if (metadata.deletionTimestamp || status?.phase !== 'Hibernated') return false;
  if (metadata.generation === undefined || status.observedGeneration !== metadata.generation) return false;
  return !status.conditions?.some((c) => c.type === ConditionType.Degraded && c.status === 'True');
}

/**
 * The production writer: a server-side apply of the StatefulSet's Scale at 1 under the gateway's
 * field manager, as the operator writes it on a wake (kube/apply.ts applyScale), forced and with no
 * resourceVersion precondition (the gateway keeps no copy of StatefulSets). Replicas 1 is the only
 * value it ever writes, so a repeat, or the operator's own apply at 1 after it, changes nothing.
 */
export function wakeScaleWriter(objects: ObjectClient): WakeScaleWriter {
  return async (instance) => {
    const statefulSet = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { namespace: instance.namespace, name: statefulSetName(instance.name) },
    };
    await callKube(() =>
      objects.applyScale(statefulSet, 1, undefined, { fieldManager: GATEWAY_FIELD_MANAGER }),
    );
  };
}
