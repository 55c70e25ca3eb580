import type { SigningKeyStatus } from '../../../api/queue-binding.js';

export type RotationTransition = 'started' | 'promoted';

export interface SigningKeyDecision {
  state: SigningKeyStatus;
  /** What changed in this pass, for the Event; undefined when nothing did. */
  transition?: RotationTransition;
  /** When the pending rotation is due, for the reconcile to come back then. */
  promoteInMs?: number;
}

/**
 * Where a binding's signing keys stand, decided from the previous state, the rotation annotation
 * and the clock (pure). A new annotation value starts a rotation: the next generation is
 * published at once; after `graceMs` it becomes current and the next key is "" again. A value
 * that arrives while one rotation is pending waits for it to finish, then starts the next.
 */
export function decideSigningKeys(input: {
  previous: SigningKeyStatus | undefined;
  requested: string | undefined;
  now: Date;
  graceMs: number;
}): SigningKeyDecision {
  let state: SigningKeyStatus = { ...(input.previous ?? { currentGeneration: 0 }) };
  let transition: RotationTransition | undefined;
  const now = input.now.getTime();
  if (
    state.nextGeneration === undefined &&
    input.requested !== undefined &&
    input.requested !== state.rotationRequest
  ) {
    state = {
      currentGeneration: state.currentGeneration,
      nextGeneration: state.currentGeneration + 1,
      promoteAfter: new Date(now + input.graceMs).toISOString(),
      rotationRequest: input.requested,
    };
    transition = 'started';
  }
  // `!(due > now)` also promotes when promoteAfter is unreadable, rather than never.
  if (state.nextGeneration !== undefined && !(Date.parse(state.promoteAfter ?? '') > now)) {
    state = {
      currentGeneration: state.nextGeneration,
      ...(state.rotationRequest ? { rotationRequest: state.rotationRequest } : {}),
    };
    transition = 'promoted';
  }
  const decision: SigningKeyDecision = { state };
  if (transition) decision.transition = transition;
  if (state.nextGeneration !== undefined)
    decision.promoteInMs = Math.max(0, Date.parse(state.promoteAfter ?? '') - now);
  return decision;
}
