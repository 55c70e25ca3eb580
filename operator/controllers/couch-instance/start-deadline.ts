import { ConditionReason, ConditionType, type Condition } from '../../../api/conditions.js';
import type { CouchInstanceStatus } from '../../../api/couch-instance.js';
import type { ConditionUpdate } from '../conditions.js';

/**
 * The start deadline, as a Deployment's progressDeadlineSeconds: an instance that has been trying
 * to start (Starting or Waking) for longer than SETTEE_START_DEADLINE without CouchDB answering
 * says so in its status, Progressing False and Degraded True with reason StartDeadlineExceeded and
 * the cause in the message (not-ready-cause.ts), and in one Warning Event. It stays up: the
 * idle clock counts from Ready (hibernation.ts), and the condition clears once it answers.
 */

/**
 * The start attempt the previous status tells of: since Progressing last turned True (creation, a
 * wake, the pod ceasing to answer), and whether the deadline was already reported for this
 * generation. A spec change (a new generation: a region fixed, resources lowered) starts the
 * clock again, as a Deployment's new rollout does.
 */
export function startAttemptOf(options: {
  conditions: readonly Condition[] | undefined;
  generation: number | undefined;
}): { since?: string; exceeded: boolean } {
  const progressing = options.conditions?.find((c) => c.type === ConditionType.Progressing);
  if (!progressing) return { exceeded: false };
  if (progressing.status === 'True') return { since: progressing.lastTransitionTime, exceeded: false };
  const sameGeneration =
    options.generation === undefined || progressing.observedGeneration === options.generation;
  if (progressing.reason === ConditionReason.StartDeadlineExceeded && sameGeneration)
    return { since: progressing.lastTransitionTime, exceeded: true };
  return { exceeded: false };
}

/** The message of the StartDeadlineExceeded conditions and Event. */
export function startDeadlineMessage(options: { startDeadline: string; cause: string }): string {
  return (
    `CouchDB has not answered within the start deadline (${options.startDeadline}): ${options.cause}. ` +
    'The instance stays up and this clears once it answers'
  );
}

/** Progressing False with the cause, for an instance past its start deadline. */
export function startDeadlineProgressing(message: string): ConditionUpdate {
  return {
    type: ConditionType.Progressing,
    status: 'False',
    reason: ConditionReason.StartDeadlineExceeded,
    message,
  };
}

/** Degraded True with the cause, where no more precise reason (invalid spec, unschedulable) applies. */
export function startDeadlineDegraded(message: string): ConditionUpdate {
  return {
    type: ConditionType.Degraded,
    status: 'True',
    reason: ConditionReason.StartDeadlineExceeded,
    message,
  };
}

/** Progressing's message when this status newly says the start deadline passed, for the Event. */
export function newlyPastStartDeadline(
  previous: CouchInstanceStatus | undefined,
  next: CouchInstanceStatus,
): string | undefined {
  const pastDeadline = (status: CouchInstanceStatus | undefined) =>
    status?.conditions?.find(
      (c) => c.type === ConditionType.Progressing && c.reason === ConditionReason.StartDeadlineExceeded,
    );
  const condition = pastDeadline(next);
  return condition && !pastDeadline(previous) ? condition.message : undefined;
}
