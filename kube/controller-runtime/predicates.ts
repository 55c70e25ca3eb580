import type { KubernetesObject } from '../kubernetes-object.js';

/**
 * Decides whether an update is worth a reconcile. Applied to updates only: adds and deletes
 * always enqueue. `previous` is undefined when the informer never saw the object before.
 */
export type UpdatePredicate<T extends KubernetesObject = KubernetesObject> = (
  previous: T | undefined,
  current: T,
) => boolean;

function sameStringMap(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): boolean {
  const aKeys = Object.keys(a ?? {});
  if (aKeys.length !== Object.keys(b ?? {}).length) return false;
  return aKeys.every((key) => a?.[key] === b?.[key]);
}

/** metadata.generation moves on spec changes only, never on status writes. */
export const generationChanged: UpdatePredicate = (previous, current) =>
  previous?.metadata?.generation !== current.metadata?.generation;

/** Annotations carry signals from outside the spec, e.g. the gateway's wake request. */
export const annotationsChanged: UpdatePredicate = (previous, current) =>
  !sameStringMap(previous?.metadata?.annotations, current.metadata?.annotations);

export const labelsChanged: UpdatePredicate = (previous, current) =>
  !sameStringMap(previous?.metadata?.labels, current.metadata?.labels);

/** Deletion started, or finalizers changed while it waits. */
export const deletionChanged: UpdatePredicate = (previous, current) =>
  Boolean(previous?.metadata?.deletionTimestamp) !== Boolean(current.metadata?.deletionTimestamp) ||
  (previous?.metadata?.finalizers ?? []).join(',') !== (current.metadata?.finalizers ?? []).join(',');

export function anyOf<T extends KubernetesObject>(...predicates: UpdatePredicate<T>[]): UpdatePredicate<T> {
  return (previous, current) =>
    previous === undefined || predicates.some((predicate) => predicate(previous, current));
}

/**
 * The predicate for a controller's own kind: reconcile on spec, label, annotation or deletion
 * changes, and skip updates that only changed status, which are mostly the controller's own
 * status writes and would otherwise make every reconcile trigger the next.
 */
export const isSpecOrMetadataChange: UpdatePredicate = anyOf(
  generationChanged,
  annotationsChanged,
  labelsChanged,
  deletionChanged,
);
