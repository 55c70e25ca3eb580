import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { callKube } from './errors.js';

/** A namespaced custom object as CustomObjectsApi addresses it. */
export interface CustomObjectRef {
  group: string;
  version: string;
  plural: string;
  namespace: string;
  name: string;
}

/**
 * Sets one annotation on a custom object with a JSON merge patch: only that key changes, whoever
 * owns the rest of the object, and writing the same value twice changes nothing the second time.
 * How the gateway asks the operator for something (a wake, a signing key rotation).
 */
export async function patchAnnotation(
  customObjects: CustomObjectsApi,
  options: { object: CustomObjectRef; annotation: string; value: string; fieldManager: string },
): Promise<void> {
  await callKube(() =>
    customObjects.patchNamespacedCustomObject(
      {
        ...options.object,
        body: { metadata: { annotations: { [options.annotation]: options.value } } },
        fieldManager: options.fieldManager,
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    ),
  );
}
