import type { SigningKeyStatus } from '../../../api/queue-binding.js';

/** Signing keys as this operator writes them: the next generation is always there. */
export type SigningKeyPair = SigningKeyStatus & { nextGeneration: number };

/**
 * What changed in this pass, for the Event: `rotated` (the next key became current and a new next
 * was derived), or `next-published` (a binding from before the two-key model got its next key).
 */
export type SigningKeyTransition = 'rotated' | 'next-published';

export interface SigningKeyDecision {
  state: SigningKeyPair;
  transition?: SigningKeyTransition;
  /** Only while a rotation started by an older operator waits for its promoteAfter: how long. */
  rotateInMs?: number;
}

function pair(currentGeneration: number, rotationRequest: string | undefined): SigningKeyPair {
  return {
    currentGeneration,
    nextGeneration: currentGeneration + 1,
    ...(rotationRequest !== undefined ? { rotationRequest } : {}),
  };
}

/**
 * Where a binding's signing keys stand, decided from the previous state, the rotation annotation
 * and the clock (pure). QStash's model: always a current key (generation g, which signs) and a
 * next key (g + 1); a new annotation value rotates at once to g + 1 and g + 2, so a receiver that
 * holds the previous pair verifies the new deliveries with its next key.
 *
 * Status written by the older grace-period model is upgraded without breaking its receivers:
 * - `{currentGeneration: g}` alone (no rotation pending; VQUEUE_NEXT_SIGNING_KEY was "") becomes
 *   g and g + 1: the signing key does not change, only the next key is published.
 * - a pending rotation (`nextGeneration: g + 1`, `promoteAfter`) keeps the promise its Event made:
 *   it completes at promoteAfter, which is this model's rotation (g + 1 current, g + 2 next), or
 *   earlier if a new annotation value asks for a rotation, which is the same step.
 */
export function decideSigningKeys(input: {
  previous: SigningKeyStatus | undefined;
  requested: string | undefined;
  now: Date;
}): SigningKeyDecision {
  const { previous, requested } = input;
  const current = previous?.currentGeneration ?? 0;
  const answered = previous?.rotationRequest;
  const newRequest = requested !== undefined && requested !== answered;
  const legacyPromoteAt =
    previous?.promoteAfter === undefined ? undefined : Date.parse(previous.promoteAfter);
  // `!(due > now)` also completes a rotation whose promoteAfter is unreadable, rather than never.
  const legacyDue = legacyPromoteAt !== undefined && !(legacyPromoteAt > input.now.getTime());
  if (newRequest || legacyDue)
    return { state: pair(current + 1, newRequest ? requested : answered), transition: 'rotated' };
  if (legacyPromoteAt !== undefined) {
    return {
      state: { ...pair(current, answered), promoteAfter: previous?.promoteAfter ?? '' },
      rotateInMs: legacyPromoteAt - input.now.getTime(),
    };
  }
  const state = pair(current, answered);
  if (previous && previous.nextGeneration === undefined) return { state, transition: 'next-published' };
  return { state };
}
