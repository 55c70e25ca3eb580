/**
 * The unit of work of every controller: `namespace/name` of the primary object (just `name` for a
 * cluster-scoped one). Keys, not events, go on the work queue, so a burst of changes to one object
 * collapses into one reconcile that re-reads current state.
 */
export type ObjectKey = string;

export interface ObjectRef {
  namespace?: string | undefined;
  name: string;
}

export function objectKey(ref: ObjectRef): ObjectKey {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

/** The key of an object as the API returns it; undefined when it has no name (never true of stored objects). */
export function objectKeyOf(object: {
  metadata?: { namespace?: string; name?: string };
}): ObjectKey | undefined {
  const name = object.metadata?.name;
  return name ? objectKey({ namespace: object.metadata?.namespace, name }) : undefined;
}

export function parseObjectKey(key: ObjectKey): ObjectRef {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
