import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import {
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
  type CouchInstanceStatus,
} from '../../api/couch-instance.js';
import { callKube, isNotFound } from '../../kube/errors.js';
import { stableStringify } from '../../resources/applied-digest.js';

export function isSameStatus(a: CouchInstanceStatus | undefined, b: CouchInstanceStatus): boolean {
  return stableStringify(a ?? {}) === stableStringify(b);
}

/**
 * A JSON merge patch that turns `previous` into `next`: fields `next` no longer has are nulled
 * (a merge patch keeps what it does not mention), arrays are replaced whole.
 */
export function buildStatusPatch(
  previous: CouchInstanceStatus | undefined,
  next: CouchInstanceStatus,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(previous ?? {})) if (!(key in next)) patch[key] = null;
  return patch;
}

/**
 * Writes the status subresource when it changed. Returns the instance as stored afterwards, or
 * undefined when nothing was written or the instance is gone.
 */
export async function writeStatus(options: {
  customObjects: CustomObjectsApi;
  instance: CouchInstance;
  status: CouchInstanceStatus;
}): Promise<CouchInstance | undefined> {
  const { customObjects, instance, status } = options;
  if (isSameStatus(instance.status, status)) return undefined;
  try {
    return (await callKube(() =>
      customObjects.patchNamespacedCustomObjectStatus(
        {
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          plural: COUCH_INSTANCE_PLURAL,
          namespace: instance.metadata.namespace ?? '',
          name: instance.metadata.name ?? '',
          body: { status: buildStatusPatch(instance.status, status) },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    )) as CouchInstance;
  } catch (err) {
    // Deleted while being reconciled: there is no status left to write.
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
