import type { V1Pod } from '@kubernetes/client-node';
import { LABEL_INSTANCE } from '../../api/contract.js';

/** The waiting reason of a pod whose image the stand-in cannot run as a local process. */
export const IMAGE_NOT_RUNNABLE_REASON = 'ImageNotRunnableLocally';

/**
 * Whether the stand-in can run the pod's container: it runs CouchDB as a local engine process, so
 * an image of the official `couchdb` repository (any registry, any tag), or the image a
 * CouchInstance's pod carries (its `spec.image`, a mirror or a custom build of CouchDB).
 */
export function canRunLocally(pod: V1Pod): boolean {
  const containers = pod.spec?.containers ?? [];
  if (containers.length !== 1) return false;
  if (pod.metadata?.labels?.[LABEL_INSTANCE]) return true;
  return isCouchDbImage(containers[0]?.image ?? '');
}

/** `couchdb`, `couchdb:3.5.1`, `docker.io/library/couchdb@sha256:...` and the like. */
export function isCouchDbImage(image: string): boolean {
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSegment = withoutDigest.split('/').pop() ?? '';
  return lastSegment.split(':')[0] === 'couchdb';
}

/** What the waiting container says when its image cannot run here. */
export function imageNotRunnableMessage(pod: V1Pod): string {
  const images = (pod.spec?.containers ?? []).map((c) => c.image ?? '').join(', ');
  return (
    `the Settee kubelet stand-in runs one CouchDB container per pod (a couchdb:* image, or a ` +
    `CouchInstance's spec.image) as a local engine process; it cannot run ${images || 'no image'}`
  );
}
