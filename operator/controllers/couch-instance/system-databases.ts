import type { V1Pod } from '@kubernetes/client-node';
import type { CouchInstancePhase } from '../../../api/couch-instance.js';
import { isFirstStart, SYSTEM_DATABASES } from '../../../api/first-start.js';
import { podAddress } from '../../../api/pod-address.js';
import { EngineQueryError, getEngineJson, type EngineQuery } from './engine-query.js';

/**
 * How soon a started instance whose system databases are not there yet is looked at again:
 * nothing in the cluster changes when CouchDB makes them, so no watch event would bring it back.
 */
export const SYSTEM_DATABASES_RECHECK_MS = 250;

/** Each GET's deadline: a started engine answers in ms; a stalled one is asked again at the recheck. */
const SYSTEM_DATABASES_TIMEOUT_MS = 2_000;

/**
 * At a first start, once the StatefulSet reports its pod ready, why the instance is not Running
 * yet; undefined when it is past that (or not ready at all, which status says by itself).
 */
export async function firstStartNotServing(check: {
  previousPhase: CouchInstancePhase | undefined;
  ready: boolean;
  pod: V1Pod | undefined;
  credentials: EngineQuery['credentials'];
  signal: AbortSignal;
}): Promise<string | undefined> {
  // A new instance has no status yet: that is a first start too.
  if (!check.ready || !isFirstStart(check.previousPhase ?? 'Pending')) return undefined;
  const address = check.pod && podAddress(check.pod);
  if (!address) return 'CouchDB answers, but the operator does not see its pod’s address yet';
  return systemDatabasesMissing({
    origin: address.origin,
    credentials: check.credentials,
    timeoutMs: SYSTEM_DATABASES_TIMEOUT_MS,
    signal: check.signal,
  });
}

/**
 * Why the instance's CouchDB does not serve its system databases yet (one admin GET each), or
 * undefined once it serves every one. A database that does not exist, an engine that does not
 * answer and one that refuses the admin are all "not ready yet", said in the message, never a
 * failed reconcile: the start deadline is what reports an engine that never gets there.
 */
async function systemDatabasesMissing(query: EngineQuery): Promise<string | undefined> {
  const problems = await Promise.all(
    SYSTEM_DATABASES.map(async (name) => {
      try {
        await getEngineJson(query, `/${name}`);
        return undefined;
      } catch (err) {
        if (query.signal?.aborted) throw err;
        if (err instanceof EngineQueryError && err.status === 404) return `${name} does not exist yet`;
        return err instanceof Error ? err.message : String(err);
      }
    }),
  );
  const missing = problems.filter((problem) => problem !== undefined);
  return missing.length === 0
    ? undefined
    : `CouchDB answers, but its system databases do not: ${missing.join('; ')}`;
}
