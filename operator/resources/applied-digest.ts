import crypto from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ANNOTATION_APPLIED_DIGEST } from '../api/well-known.js';

/** JSON with object keys sorted, so equal objects always serialize (and digest) the same. */
export function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

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
