import type { Logger } from 'winston';
import type { ObjectKey } from './object-key.js';

/**
 * What one reconcile asks of the loop. An empty result means "converged": the key's backoff is
 * forgotten and nothing is scheduled (the periodic resync still comes). `requeueAfterMs` asks for
 * another pass after a delay even though nothing failed, e.g. to hibernate once idleAfter elapses.
 * Failures are not results: throw, and the loop requeues with per-key exponential backoff
 * (a 409 Conflict is retried quickly and not counted as an error).
 */
export interface ReconcileResult {
  requeueAfterMs?: number;
}

export const DONE: ReconcileResult = Object.freeze({});

export function requeueAfter(ms: number): ReconcileResult {
  return { requeueAfterMs: ms };
}

export interface ReconcileContext {
  /** Child logger carrying `{controller, key}`. */
  logger: Logger;
  /** Aborted when the controller stops (shutdown or lost leadership); pass it to long waits. */
  signal: AbortSignal;
  /** How many times in a row this key has failed before this attempt (0 on a fresh key). */
  failures: number;
}

/**
 * One controller's reconcile logic. It must be level-triggered and idempotent: read the current
 * state for `key` (the object may be gone), make the world match, write status. The loop
 * guarantees that one key is never reconciled twice at once.
 */
export interface Reconciler {
  reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult>;
}
