import type { KubernetesObject } from './kubernetes-object.js';

/**
 * Whether `manager` is among the writers of `object`, read from its managedFields (which the caches
 * keep as writer names only: object-trim.ts). The API server names there every client that set a
 * field still in the object, by its field manager. Not enough alone to tell that no one else
 * changed it: a write that only removes a field (or sets it to its zero value, which is not
 * stored) adds no entry, and a write through the scale subresource adds none either (Kubernetes
 * 1.31, after `kubectl scale` of a StatefulSet); holds-fields.ts compares the content.
 */
export function isWrittenBy(object: KubernetesObject | undefined, manager: string): boolean {
  return (object?.metadata?.managedFields ?? []).some((writer) => writer.manager === manager);
}
