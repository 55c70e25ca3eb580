/**
 * Which objects an informer lists and watches. `plural` is given rather than discovered so an
 * informer needs no discovery round-trip and its path is known before the API server answers.
 */
export interface WatchedResource {
  /** `v1` for the core group, otherwise `group/version`, e.g. `apps/v1`, `settee.dev/v1alpha1`. */
  apiVersion: string;
  kind: string;
  plural: string;
  /** Only objects in this namespace; undefined = every namespace (or a cluster-scoped kind). */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

/** The collection path, e.g. `/apis/apps/v1/namespaces/ns/statefulsets` or `/api/v1/secrets`. */
export function resourceCollectionPath(resource: WatchedResource): string {
  const root = resource.apiVersion.includes('/')
    ? `/apis/${resource.apiVersion}`
    : `/api/${resource.apiVersion}`;
  const scope = resource.namespace ? `/namespaces/${encodeURIComponent(resource.namespace)}` : '';
  return `${root}${scope}/${resource.plural}`;
}

/** Identifies an informer so several controllers watching the same objects share one. */
export function resourceIdentity(resource: WatchedResource): string {
  return [resourceCollectionPath(resource), resource.labelSelector ?? '', resource.fieldSelector ?? ''].join(
    '?',
  );
}
