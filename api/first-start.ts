import type { CouchInstancePhase } from './couch-instance.js';

/**
 * The databases a tenant's first requests may need (`_session` logins and user documents read
 * `_users`; replication documents go to `_replicator`). A single-node CouchDB makes them itself at
 * its first start, but only after chttpd listens: `/_up` answers, and the pod turns Ready, before
 * they exist (0.4 s on a quiet machine, 3 s at load 28; see docs/cold-start.md). A wake or a
 * restart finds them on the volume.
 */
export const SYSTEM_DATABASES = ['_users', '_replicator'] as const;

/**
 * The phases the operator reports before an instance first runs. Starting is also a restart after
 * a crash, which finds the databases and passes the check at once.
 */
const FIRST_START_PHASES: readonly (CouchInstancePhase | undefined)[] = ['Pending', 'Starting'];

/**
 * Whether an instance in this phase may be at its first start, the only start that can meet an
 * engine without its system databases: the operator reports it Running, and the gateway releases
 * its held requests, only once they answer. Waking and Running instances skip that check.
 */
export function isFirstStart(phase: CouchInstancePhase | undefined): boolean {
  return FIRST_START_PHASES.includes(phase);
}
