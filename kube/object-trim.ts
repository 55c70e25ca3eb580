import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { KubernetesObject } from './kubernetes-object.js';

/**
 * Drops, in place, fields of a cached object that nothing in this process reads, as
 * controller-runtime's cache TransformFunc does: with thousands of objects cached, the fields read
 * are a small part of the heap the whole objects would take.
 */
export type ObjectTrim = (object: KubernetesObject) => void;

/**
 * Trims by kind, keyed `apiVersion/kind` (`v1/Pod`, `apps/v1/StatefulSet`; see trimKey). An
 * informer picks its kind's trim from its resource: the items of a list carry no kind.
 */
export type ObjectTrims = ReadonlyMap<string, ObjectTrim>;

export function trimKey(kind: { apiVersion?: string | undefined; kind?: string | undefined }): string {
  return `${kind.apiVersion ?? ''}/${kind.kind ?? ''}`;
}

/** kubectl's client-side apply copy of the whole object; server-side apply (ours) never writes it. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * What no cache of ours reads, of any kind: managedFields' field sets (server-side apply computes
 * them on the server; often the largest part of an object) and kubectl's last-applied copy of the
 * object. Of each managedFields entry its writer stays (manager, operation, subresource: see
 * field-writers.ts), so a restarted operator can tell its own last write from someone else's.
 * Then the kind's own trim, if given.
 */
export function trimObject(object: KubernetesObject, kindTrim?: ObjectTrim): void {
  const metadata = object.metadata;
  if (metadata) {
    if (metadata.managedFields) metadata.managedFields = metadata.managedFields.map(writerOf);
    if (metadata.annotations && LAST_APPLIED_ANNOTATION in metadata.annotations)
      delete metadata.annotations[LAST_APPLIED_ANNOTATION];
  }
  kindTrim?.(object);
}

function writerOf({ manager, operation, subresource }: V1ManagedFieldsEntry): V1ManagedFieldsEntry {
  return subresource === undefined ? { manager, operation } : { manager, operation, subresource };
}
