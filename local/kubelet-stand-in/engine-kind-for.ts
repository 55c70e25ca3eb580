import type { V1Pod } from '@kubernetes/client-node';
import { locateCouchDbRelease, type CouchEngineKind } from '../couch-engine/index.js';

/**
 * The engine that runs a pod's container: the Apache CouchDB release for an image of CouchDB 3.x
 * (`couchdb:3`, `couchdb:3.5.1`, a mirror's `.../couchdb:3.x`, or a spec.image tagged so) when the
 * machine has one; otherwise the pouchdb-server stand-in (another image, or no release here).
 */
export function engineKindFor(pod: V1Pod, env: NodeJS.ProcessEnv = process.env): CouchEngineKind {
  const image = pod.spec?.containers[0]?.image ?? '';
  return isCouchDb3Image(image) && locateCouchDbRelease(env) ? 'apache-couchdb' : 'pouchdb-server';
}

/** An image of the `couchdb` repository (any registry) tagged 3 or 3.x.y. */
export function isCouchDb3Image(image: string): boolean {
  const withoutDigest = image.split('@')[0] ?? '';
  const [repository, tag] = (withoutDigest.split('/').pop() ?? '').split(':');
  return repository === 'couchdb' && tag !== undefined && /^3(\.\d+){0,2}$/.test(tag);
}
