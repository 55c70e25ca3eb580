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

/**
 * Whether `manager` is the only writer of `object` itself, besides its subresources (a
 * StatefulSet's status, written by the controller-manager; its scale, whose replicas are compared
 * on their own). Any other client that set a field still in the object shows as a writer of its own
 * (a `kubectl edit` of the pod template, a merge patch): the object is then not just what `manager`
 * last wrote. A write that only removes a field leaves no writer (see isWrittenBy), so it is not seen.
 */
export function isWrittenOnlyBy(object: KubernetesObject | undefined, manager: string): boolean {
  const writers = (object?.metadata?.managedFields ?? []).filter((writer) => !writer.subresource);
  return writers.length > 0 && writers.every((writer) => writer.manager === manager);
}
