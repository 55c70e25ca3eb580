import { ANNOTATION_WAKE_REQUESTED } from '../../api/contract.js';
import type { CouchInstance } from '../../api/couch-instance.js';

/**
 * Whether a request for an instance without a usable address must ask the operator for a wake.
 * `episode` names the hibernation being ended (its hibernatedAt), so one replica asks once per
 * episode; `requestedAt` is the annotation value to write.
 */
export type WakeDecision =
  | { kind: 'not-hibernated' }
  | { kind: 'already-requested'; episode: string }
  | { kind: 'request'; episode: string; requestedAt: string };

/**
 * The contract: the operator wakes an instance when the wake-requested annotation is later than
 * status.hibernatedAt. The time written is at least a second after hibernatedAt (whose precision
 * may be whole seconds), so a gateway whose clock is behind the operator's still wakes it.
 */
export function decideWake(instance: CouchInstance, now: Date): WakeDecision {
  const episode = instance.status?.hibernatedAt;
  const hibernatedMs = episode === undefined ? Number.NaN : Date.parse(episode);
  if (episode === undefined || Number.isNaN(hibernatedMs)) return { kind: 'not-hibernated' };
  const requested = Date.parse(instance.metadata.annotations?.[ANNOTATION_WAKE_REQUESTED] ?? '');
  if (requested > hibernatedMs) return { kind: 'already-requested', episode };
  const at = Math.max(now.getTime(), hibernatedMs + 1_000);
  return { kind: 'request', episode, requestedAt: new Date(at).toISOString() };
}
