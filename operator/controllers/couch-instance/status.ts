import { ConditionReason, ConditionType } from '../../../api/conditions.js';
import type {
  CouchInstanceBackupScheduleStatus,
  CouchInstancePhase,
  CouchInstanceRestoreStatus,
  CouchInstanceStatus,
} from '../../../api/couch-instance.js';
import type { MeteredUsage } from './metering.js';
import type { UsageReading } from './usage-meter.js';
import type { RequestUsageFigures } from './request-usage.js';
import { mergeConditions, type ConditionUpdate } from '../conditions.js';
import type { HibernationDecision } from './hibernation.js';
import { startDeadlineDegraded, startDeadlineMessage, startDeadlineProgressing } from './start-deadline.js';

/** What the StatefulSet reports: `replicas` pods exist, `readyReplicas` of them answer /_up. */
export interface ObservedStatefulSet {
  replicas: number;
  readyReplicas: number;
}

export interface StatusInput {
  previous: CouchInstanceStatus | undefined;
  generation: number | undefined;
  /** RFC 3339. */
  now: string;
  endpoint: string;
  credentialsSecret?: string | undefined;
  /** Why the spec is invalid (ajv and the CEL rules' TypeScript twins); empty when valid. */
  specViolations: readonly string[];
  /** The namespace has no room for another free instance (instance-limit.ts): why, for a person. */
  instanceLimit?: string | undefined;
  /** Absent when the spec is invalid or the reconcile failed before deciding. */
  decision?: HibernationDecision | undefined;
  /** Absent until the StatefulSet exists. */
  statefulSet?: ObservedStatefulSet | undefined;
  /** The reconcile failed with this message; the phase is kept, Degraded says why. */
  reconcileError?: string | undefined;
  idleAfter: string;
  /** This reconcile's usage measurement, if one was due; absent = keep what status says. */
  usage?: UsageReading | undefined;
  /**
   * The metered figures, when they accrued in this reconcile (metering.ts), with the gateway's
   * request counts (request-usage.ts); absent = keep them.
   */
  metered?: (MeteredUsage & RequestUsageFigures) | undefined;
  /** With the backups add-on: the BackedUp condition (backup-condition.ts); absent without it. */
  backedUp?: ConditionUpdate | undefined;
  /** With addons.backups: the schedule in force and since when (backup-schedule-since.ts). */
  backupSchedule?: CouchInstanceBackupScheduleStatus | undefined;
  /** With spec.restore: how the restore stands (restore-from-backup.ts). */
  restore?: CouchInstanceRestoreStatus | undefined;
  /** The scheduler's message when it cannot place the pod (api/pod-scheduling.ts). */
  unschedulable?: string | undefined;
  /** Why the pod does not answer (not-ready-cause.ts), for the StartDeadlineExceeded conditions. */
  notReadyCause?: string | undefined;
  /** The operator's start deadline as configured (SETTEE_START_DEADLINE), for messages. */
  startDeadline?: string | undefined;
  /**
   * At a first start, why the pod answers /_up but its system databases do not yet
   * (system-databases.ts): until they do, the instance is not Running.
   */
  systemDatabasesMissing?: string | undefined;
}

const restoreFailed = (input: StatusInput): boolean => input.restore?.phase === 'Failed';
const restoreFailure = (input: StatusInput): string =>
  `the restore${input.restore?.backup ? ` from ${input.restore.backup}` : ''} failed: ${input.restore?.message ?? ''}`;

const WAKING_FROM: readonly (CouchInstancePhase | undefined)[] = ['Hibernating', 'Hibernated', 'Waking'];

export function computePhase(input: StatusInput): CouchInstancePhase {
  const { decision, statefulSet } = input;
  if (input.specViolations.length > 0 || restoreFailed(input)) return 'Failed';
  // A failed reconcile observed nothing new: keep what was last known, Degraded says what failed.
  if (input.reconcileError) return input.previous?.phase ?? 'Pending';
  if (!decision || !statefulSet) return 'Pending';
  if (decision.replicas === 0) {
    return statefulSet.replicas > 0 || statefulSet.readyReplicas > 0 ? 'Hibernating' : 'Hibernated';
  }
  if (statefulSet.readyReplicas > 0 && input.systemDatabasesMissing === undefined)
    return input.restore?.phase === 'Restoring' ? 'Restoring' : 'Running';
  return decision.transition === 'Wake' || WAKING_FROM.includes(input.previous?.phase)
    ? 'Waking'
    : 'Starting';
}

const unschedulableMessage = (input: StatusInput): string =>
  `the pod cannot be scheduled: ${input.unschedulable ?? ''}`;

/** The conditions of an instance held back by its namespace's free-instance limit. */
function instanceLimitConditions(message: string): ConditionUpdate[] {
  const reason = ConditionReason.InstanceLimitExceeded;
  return [
    { type: ConditionType.Ready, status: 'False', reason, message: 'not created: the namespace has no room' },
    { type: ConditionType.Active, status: 'Unknown', reason, message: 'not created yet' },
    {
      type: ConditionType.Progressing,
      status: 'False',
      reason,
      message: 'waiting for room in the namespace',
    },
    { type: ConditionType.Degraded, status: 'True', reason, message },
  ];
}

function readyCondition(phase: CouchInstancePhase, input: StatusInput): ConditionUpdate {
  if (input.unschedulable && (phase === 'Starting' || phase === 'Waking'))
    return {
      type: ConditionType.Ready,
      status: 'False',
      reason: ConditionReason.Unschedulable,
      message: unschedulableMessage(input),
    };
  if (phase === 'Failed' && restoreFailed(input))
    return {
      type: ConditionType.Ready,
      status: 'False',
      reason: ConditionReason.RestoreFailed,
      message: restoreFailure(input),
    };
  const messages: Record<CouchInstancePhase, string> = {
    Pending: 'the operator is creating the instance',
    Starting: input.systemDatabasesMissing ?? 'CouchDB is starting',
    Running: 'CouchDB answers on /_up',
    Hibernating: 'scaling to zero',
    Hibernated: 'hibernated; the next request wakes it',
    Waking: 'CouchDB is starting after a wake request',
    Restoring: `CouchDB answers and is being filled from its backup (spec.restore)${input.restore?.message ? `: ${input.restore.message}` : ''}`,
    Failed: 'the spec is invalid; see the Degraded condition',
  };
  return {
    type: ConditionType.Ready,
    status: phase === 'Running' ? 'True' : 'False',
    reason: phase === 'Failed' ? ConditionReason.InvalidSpec : phase,
    message: messages[phase],
  };
}

function activeCondition(phase: CouchInstancePhase, input: StatusInput): ConditionUpdate {
  const type = ConditionType.Active;
  if (phase === 'Failed' && restoreFailed(input))
    return {
      type,
      status: 'True',
      reason: ConditionReason.RestoreFailed,
      message: 'scaled up; its restore failed',
    };
  if (phase === 'Failed')
    return { type, status: 'Unknown', reason: ConditionReason.InvalidSpec, message: 'the spec is invalid' };
  if (phase === 'Hibernating' || phase === 'Hibernated') {
    return {
      type,
      status: 'False',
      reason: phase,
      message: `no activity for ${input.idleAfter}: scaled to zero with its data kept; the next request wakes it`,
    };
  }
  const reason = input.decision?.reason;
  if (reason === 'KeepAlive')
    return {
      type,
      status: 'True',
      reason: ConditionReason.KeepAlive,
      message: 'keepAlive is on: never hibernated',
    };
  if (phase === 'Waking')
    return {
      type,
      status: 'True',
      reason: ConditionReason.WakeRequested,
      message: 'woken by a request at the gateway',
    };
  if (reason === 'AwaitingReady')
    return {
      type,
      status: 'True',
      reason: ConditionReason.Starting,
      message: `CouchDB is not answering yet; the ${input.idleAfter} idle period counts from when it does`,
    };
  if (reason === 'FinalBackup')
    return {
      type,
      status: 'True',
      reason: ConditionReason.FinalBackup,
      message: 'idle: taking the final backup before hibernating',
    };
  if (reason === 'ReplicationRunning')
    return {
      type,
      status: 'True',
      reason: ConditionReason.ReplicationRunning,
      message: `replication jobs run on the instance; it hibernates within ${input.idleAfter} once they stop`,
    };
  return {
    type,
    status: 'True',
    reason: ConditionReason.RecentActivity,
    message: `hibernates after ${input.idleAfter} without activity`,
  };
}

/** Set when the decision says the start deadline passed while it still does not answer. */
function pastStartDeadline(phase: CouchInstancePhase, input: StatusInput): string | undefined {
  if (!input.decision?.startDeadlineExceeded || (phase !== 'Starting' && phase !== 'Waking'))
    return undefined;
  return startDeadlineMessage({
    startDeadline: input.startDeadline ?? 'the start deadline',
    cause: input.notReadyCause ?? 'its pod is not ready',
  });
}

function progressingCondition(phase: CouchInstancePhase, input: StatusInput): ConditionUpdate {
  const type = ConditionType.Progressing;
  if (phase === 'Failed' && restoreFailed(input))
    return {
      type,
      status: 'False',
      reason: ConditionReason.RestoreFailed,
      message: 'the restore failed; delete the instance and create it again to retry',
    };
  if (phase === 'Failed')
    return {
      type,
      status: 'False',
      reason: ConditionReason.InvalidSpec,
      message: 'waiting for a valid spec',
    };
  const deadline = pastStartDeadline(phase, input);
  if (deadline) return startDeadlineProgressing(deadline);
  const moving =
    phase === 'Pending' ||
    phase === 'Starting' ||
    phase === 'Waking' ||
    phase === 'Hibernating' ||
    phase === 'Restoring';
  return {
    type,
    status: moving ? 'True' : 'False',
    reason: phase,
    message: moving ? `${phase.toLowerCase()}` : `settled: ${phase.toLowerCase()}`,
  };
}

function degradedCondition(phase: CouchInstancePhase, input: StatusInput): ConditionUpdate {
  const type = ConditionType.Degraded;
  if (input.specViolations.length > 0)
    return {
      type,
      status: 'True',
      reason: ConditionReason.InvalidSpec,
      message: input.specViolations.join('; '),
    };
  if (input.reconcileError)
    return { type, status: 'True', reason: ConditionReason.ReconcileFailed, message: input.reconcileError };
  if (restoreFailed(input))
    return {
      type,
      status: 'True',
      reason: ConditionReason.RestoreFailed,
      message: restoreFailure(input),
    };
  if (input.restore?.phase === 'Restoring' && input.restore.nextAttemptAt !== undefined)
    return {
      type,
      status: 'True',
      reason: ConditionReason.RestoreRetrying,
      message: `the restore from ${input.restore.backup ?? ''}: ${input.restore.message ?? ''}`,
    };
  if (input.unschedulable)
    return {
      type,
      status: 'True',
      reason: ConditionReason.Unschedulable,
      message: unschedulableMessage(input),
    };
  const deadline = pastStartDeadline(phase, input);
  if (deadline) return startDeadlineDegraded(deadline);
  return { type, status: 'False', reason: ConditionReason.AsExpected, message: 'no problem found' };
}

function usageCondition(usage: UsageReading | undefined): ConditionUpdate[] {
  const type = ConditionType.UsageMeasured;
  if (usage?.result === 'measured') {
    const { storageBytes, databases } = usage.usage;
    return [
      {
        type,
        status: 'True',
        reason: ConditionReason.Measured,
        message: `${storageBytes} bytes in ${databases} databases`,
      },
    ];
  }
  if (usage?.result === 'failed')
    return [
      {
        type,
        status: 'False',
        reason: ConditionReason.MeasurementFailed,
        message: `${usage.error}; status.usage keeps the last measurement`,
      },
    ];
  return [];
}

/** The whole status, pure: the reconciler writes it only when it differs from the previous one. */
export function computeStatus(input: StatusInput): CouchInstanceStatus {
  const phase = computePhase(input);
  const { decision } = input;
  const lastActivityTime = decision ? decision.lastActivityTime : input.previous?.lastActivityTime;
  const hibernatedAt = decision ? decision.hibernatedAt : input.previous?.hibernatedAt;
  const usage = {
    ...input.previous?.usage,
    ...(input.usage?.result === 'measured' ? input.usage.usage : {}),
    ...input.metered,
  };
  const status: CouchInstanceStatus = {
    phase,
    endpoint: input.endpoint,
    ...(input.credentialsSecret ? { credentialsSecret: input.credentialsSecret } : {}),
    readyReplicas: input.statefulSet?.readyReplicas ?? 0,
    ...(lastActivityTime ? { lastActivityTime } : {}),
    ...(hibernatedAt ? { hibernatedAt } : {}),
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    ...((input.restore ?? input.previous?.restore)
      ? { restore: input.restore ?? input.previous?.restore }
      : {}),
    ...(input.backupSchedule ? { backupSchedule: input.backupSchedule } : {}),
    ...(Object.keys(usage).length > 0 ? { usage } : {}),
    conditions: mergeConditions({
      // A BackedUp condition goes when the add-on does.
      previous: input.backedUp
        ? input.previous?.conditions
        : input.previous?.conditions?.filter((condition) => condition.type !== ConditionType.BackedUp),
      updates: [
        ...(input.instanceLimit !== undefined
          ? instanceLimitConditions(input.instanceLimit)
          : [
              readyCondition(phase, input),
              activeCondition(phase, input),
              progressingCondition(phase, input),
              degradedCondition(phase, input),
            ]),
        ...usageCondition(input.usage),
        ...(input.backedUp ? [input.backedUp] : []),
      ],
      generation: input.generation,
      now: input.now,
    }),
  };
  return status;
}

/**
 * The scheduler's message when this status newly says the pod cannot be scheduled (or says it for
 * a new reason), for the Warning Event; undefined when nothing changed.
 */
export function newlyUnschedulable(
  previous: CouchInstanceStatus | undefined,
  next: CouchInstanceStatus,
): string | undefined {
  const messageOf = (status: CouchInstanceStatus | undefined) =>
    status?.conditions?.find(
      (c) => c.type === ConditionType.Degraded && c.reason === ConditionReason.Unschedulable,
    )?.message;
  const message = messageOf(next);
  return message !== undefined && message !== messageOf(previous) ? message : undefined;
}
