import crypto from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATION_APPLIED_DIGEST } from '../../api/well-known.js';
import { stableStringify } from '../../kube/stable-stringify.js';

export function digestOf(value: unknown): string {
  return crypto.createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, 32);
}

/**
 * `object` with ANNOTATION_APPLIED_DIGEST set to the digest of everything else in it but
 * spec.replicas: replicas are compared on their own (replicasOf), so a wake or a hibernation that
 * changes only them is written through the scale subresource (OwnedObjects.apply), which cannot
 * write the annotation, and the digest must stay true across it.
 */
export function withAppliedDigest<T extends KubernetesObject>(object: T): T {
  const metadata = object.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...metadata,
      annotations: {
        ...metadata.annotations,
        [ANNOTATION_APPLIED_DIGEST]: digestOf(withoutReplicas(object)),
      },
    },
  };
}

/** spec.replicas of a kind that has them (a StatefulSet), else undefined. */
export function replicasOf(object: KubernetesObject | undefined): number | undefined {
  return (object as { spec?: { replicas?: number } } | undefined)?.spec?.replicas;
}

function withoutReplicas(object: KubernetesObject): KubernetesObject {
  if (replicasOf(object) === undefined) return object;
  const { replicas: _replicas, ...spec } = (object as { spec: { replicas?: number } }).spec;
  return { ...object, spec } as KubernetesObject;
}

export function appliedDigestOf(object: KubernetesObject | undefined): string | undefined {
  return object?.metadata?.annotations?.[ANNOTATION_APPLIED_DIGEST];
}
