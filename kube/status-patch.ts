import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../api/contract.js';
import { stableStringify } from './stable-stringify.js';
import { callKube, isNotFound } from './errors.js';

type Json = Record<string, unknown>;

/** A Settee custom object with a status subresource. */
interface ObjectWithStatus<S> {
  metadata: { namespace?: string; name?: string };
  status?: S;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two statuses hold the same fields and values (key order aside). */
export function isSameStatus(a: object | undefined, b: object): boolean {
  return stableStringify(a ?? {}) === stableStringify(b);
}

/**
 * The JSON merge patch (RFC 7386) that turns `previous` into `next`: a merge patch merges nested
 * objects rather than replacing them, so a field that `next` dropped, at any depth (a completed
 * rotation's promoteAfter), must be sent as null. Arrays are replaced whole.
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
 * Writes a custom object's status subresource when it changed, as one JSON merge patch. Returns
 * the object as stored afterwards, or undefined when nothing was written or the object is gone
 * (deleted while being reconciled: there is no status left to write).
 */
export async function patchStatusIfChanged<S extends object, T extends ObjectWithStatus<S>>(options: {
  customObjects: CustomObjectsApi;
  plural: string;
  object: T;
  status: S;
}): Promise<T | undefined> {
  const { customObjects, plural, object, status } = options;
  if (isSameStatus(object.status, status)) return undefined;
  try {
    return (await callKube(() =>
      customObjects.patchNamespacedCustomObjectStatus(
        {
          group: SETTEE_GROUP,
          version: SETTEE_VERSION,
          plural,
          namespace: object.metadata.namespace ?? '',
          name: object.metadata.name ?? '',
          body: { status: mergePatchBetween((object.status ?? {}) as Json, status as Json) },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    )) as T;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
