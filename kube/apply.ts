import {
  KubernetesObjectApi,
  PatchStrategy,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { getSerializationType } from '@kubernetes/client-node/dist/util.js';

/** The one field manager under which Settee writes every object it owns. */
export const FIELD_MANAGER = 'settee-operator';

export interface ApplyOptions {
  fieldManager?: string;
  /** Server-side dry run: the API server validates and admits, but stores nothing. */
  dryRun?: boolean;
}

/**
 * Writes `desired` with server-side apply, taking ownership of exactly the fields it names. Force
 * is set because Settee is the only intended writer of the fields it applies; a conflict with
 * another manager means someone edited an owned field by hand, and the spec wins.
 */
export async function applyObject<T extends KubernetesObject>(
  client: KubernetesObjectApi,
  desired: T,
  options: ApplyOptions = {},
): Promise<T> {
  return client.patch<T>(
    toTypedModel(desired),
    undefined,
    options.dryRun ? 'All' : undefined,
    options.fieldManager ?? FIELD_MANAGER,
    true,
    PatchStrategy.ServerSideApply,
  );
}

export function makeObjectClient(kubeConfig: KubeConfig): KubernetesObjectApi {
  return KubernetesObjectApi.makeApiClient(kubeConfig);
}

/**
 * client-node serializes a patch body through its typed models, which know some JSON names only
 * under their TypeScript spelling (`x-kubernetes-validations` as `xKubernetesValidations`, `default`
 * as `_default`): a plain JSON object must become the typed model first, or those fields are
 * silently dropped. Kinds it has no model for (custom resources) pass through unchanged.
 */
function toTypedModel<T extends KubernetesObject>(object: T): T {
  return ObjectSerializer.deserialize(object, getSerializationType(object.apiVersion, object.kind)) as T;
}
