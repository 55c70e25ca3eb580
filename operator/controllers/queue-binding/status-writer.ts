import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { QUEUE_BINDING_PLURAL, type QueueBinding, type QueueBindingStatus } from '../../api/queue-binding.js';
import { callKube, isNotFound } from '../../kube/errors.js';
import { stableStringify } from '../../resources/applied-digest.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The JSON merge patch (RFC 7386) that turns `previous` into `next`: a merge patch merges nested
 * objects rather than replacing them, so a field that `next` dropped, at any depth (a finished
 * rotation's nextGeneration), must be sent as null. Arrays are replaced whole.
 */
export function mergePatchBetween(previous: Json, next: Json): Json {
  const patch: Json = {};
  for (const [key, value] of Object.entries(next)) {
    const before = previous[key];
    patch[key] = isObject(value) && isObject(before) ? mergePatchBetween(before, value) : value;
  }
  for (const key of Object.keys(previous)) if (!(key in next)) patch[key] = null;
  return patch;
}

/**
 * Writes a binding's status subresource when it changed, as one JSON merge patch. A binding
 * deleted meanwhile is not an error.
 */
export async function writeQueueBindingStatus(options: {
  customObjects: CustomObjectsApi;
  binding: QueueBinding;
  status: QueueBindingStatus;
}): Promise<void> {
  const { customObjects, binding, status } = options;
  const previous = (binding.status ?? {}) as Json;
  if (stableStringify(binding.status ?? {}) === stableStringify(status)) return;
  const patch = mergePatchBetween(previous, status as Json);
  try {
    await callKube(() =>
      customObjects.patchNamespacedCustomObjectStatus(
        {
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          plural: QUEUE_BINDING_PLURAL,
          namespace: binding.metadata.namespace ?? '',
          name: binding.metadata.name ?? '',
          body: { status: patch },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
