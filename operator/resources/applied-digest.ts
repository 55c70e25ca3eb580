import crypto from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATION_APPLIED_DIGEST } from '../../api/well-known.js';
import { stableStringify } from '../../kube/stable-stringify.js';

export function digestOf(value: unknown): string {
  return crypto.createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, 32);
}

/** `object` with ANNOTATION_APPLIED_DIGEST set to the digest of everything else in it. */
export function withAppliedDigest<T extends KubernetesObject>(object: T): T {
  const metadata = object.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, [ANNOTATION_APPLIED_DIGEST]: digestOf(object) },
    },
  };
}

export function appliedDigestOf(object: KubernetesObject | undefined): string | undefined {
  return object?.metadata?.annotations?.[ANNOTATION_APPLIED_DIGEST];
}
