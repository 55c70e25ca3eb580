/**
 * The hibernation decision, pure: from the instance's activity signals and its previous status,
 * how many replicas it should have and when to look again. The reconciler acts on the result; this
 * module never reads a clock or calls the API.
 *
 * Signals (contract.ts): the gateway's activity Lease (renewTime), the wake-requested annotation,
 * the instance's creation, the lastActivityTime the operator recorded before, and when the instance
 * itself last said that replication jobs were running (replications its own replicator runs never
 * pass the gateway, so no Lease tells of them).
 *
 * The idle clock runs only while CouchDB answers: an awake instance that is not Ready yet (its pod
 * being scheduled, its claim bound, the engine starting) is never idle, and idleness counts from
 * its last transition to Ready at the earliest. Otherwise a start slower than idleAfter (a cold
 * node, a loaded machine) would hibernate an instance that nobody could ever have used.
 *
 * An instance that never becomes Ready (its pod unschedulable, its engine crash-looping) therefore
 * never hibernates; it is not left silent either: once it has been trying to start for the start
 * deadline (as a Deployment's progressDeadlineSeconds, 10 minutes by default) the decision says
 * so, and the status and a Warning Event give the cause (start-deadline.ts). Scaling it to zero
 * would hide the failure behind an ordinary hibernation and the next request would find it again.
 */

export type HibernationReason =
  /** keepAlive: never hibernated. */
  | 'KeepAlive'
  /** Awake, and active within idleAfter. */
  | 'RecentActivity'
  /** Awake: the latest activity is the instance's own replication jobs, seen running. */
  | 'ReplicationRunning'
  /** Idle, but its final backup before hibernating is being taken (final-backup.ts). */
  | 'FinalBackup'
  /** Awake, and not Ready yet: the idle clock has not started. */
  | 'AwaitingReady'
  /** Idle for idleAfter: scale to zero now. */
  | 'IdleTimeout'
  /** Stays hibernated: no wake request since it hibernated. */
  | 'Hibernated'
  /** Hibernated, and the gateway asked for a wake after that: scale up now. */
  | 'WakeRequested';

export interface HibernationInput {
  /** Epoch milliseconds. */
  now: number;
  keepAlive: boolean;
  idleAfterMs: number;
  /** RFC 3339 timestamps; absent or unparsable ones are ignored. */
  createdAt?: string | undefined;
  activityRenewedAt?: string | undefined;
  wakeRequestedAt?: string | undefined;
  /**
   * Epoch milliseconds: when the instance last answered that replication jobs were running. The
   * reconciler asks when this decision would otherwise hibernate the instance (see
   * replication-activity.ts), and counts the answer as activity at that moment.
   */
  replicationsRunningAt?: number | undefined;
  /**
   * RFC 3339: since when CouchDB has answered without a break (readySinceOf); absent while it does
   * not. The idle clock starts here at the earliest.
   */
  readySince?: string | undefined;
  /**
   * The start attempt the status tells of (start-deadline.ts startAttemptOf): since when it has
   * been trying to start (absent: it starts now), and whether the deadline was already reported.
   */
  startAttempt?: { since?: string | undefined; exceeded: boolean } | undefined;
  /** How long an awake instance may try to start before its status says it failed (default 10 min). */
  startDeadlineMs?: number | undefined;
  previous: { lastActivityTime?: string | undefined; hibernatedAt?: string | undefined };
}

/** The parts of a previous status condition that readySinceOf reads. */
interface ObservedCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | undefined;
}

/**
 * Since when the instance has been Ready, for HibernationInput.readySince: its Ready condition's
 * last transition to True when the status already says so, or now when the StatefulSet has just
 * reported a ready replica (the status written after this decision records that transition).
 */
export function readySinceOf(options: {
  readyReplicas: number;
  previousConditions?: readonly ObservedCondition[] | undefined;
  now: number;
}): string | undefined {
  if (options.readyReplicas <= 0) return undefined;
  const ready = options.previousConditions?.find((condition) => condition.type === 'Ready');
  const since = ready?.status === 'True' ? parseTime(ready.lastTransitionTime) : undefined;
  return new Date(since === undefined ? options.now : Math.min(since, options.now)).toISOString();
}

/** The default of HibernationInput.startDeadlineMs: a Deployment's progressDeadlineSeconds. */
export const DEFAULT_START_DEADLINE_MS = 600_000;

export interface HibernationDecision {
  replicas: 0 | 1;
  reason: HibernationReason;
  /** What this decision changes, if anything: the moments Events and counters are about. */
  transition?: 'Hibernate' | 'Wake';
  /** For status.hibernatedAt: set while hibernated, absent while awake. */
  hibernatedAt?: string;
  /** For status.lastActivityTime (see recordedActivity). */
  lastActivityTime?: string;
  /** Reconcile again after this long, to hibernate on time without polling. */
  recheckAfterMs?: number;
  /** AwaitingReady only: it has been trying to start for longer than the start deadline. */
  startDeadlineExceeded?: true;
}

/** Status is not rewritten for every Lease renewal: activity is recorded at this granularity. */
export const MAX_ACTIVITY_RECORD_INTERVAL_MS = 60_000;
const MIN_ACTIVITY_RECORD_INTERVAL_MS = 1_000;

/**
 * How far ahead of the operator's clock a signal's time may be and still count, as clock skew
 * between the gateway's and the operator's machines. Later times are ignored: the wake annotation
 * and the Lease sit in the tenant's namespace, and a time set far ahead would otherwise keep a free
 * instance awake for good (or wake it again after every hibernation).
 */
export const MAX_CLOCK_SKEW_MS = 60_000;

function parseTime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

/** A signal's time as the decision may use it: never ahead of now, nor from too far ahead. */
function plausible(time: number | undefined, now: number): number | undefined {
  if (time === undefined || time > now + MAX_CLOCK_SKEW_MS) return undefined;
  return Math.min(time, now);
}

function latest(...times: (number | undefined)[]): number | undefined {
  const known = times.filter((t): t is number => t !== undefined);
  return known.length > 0 ? Math.max(...known) : undefined;
}

const iso = (time: number | undefined): string | undefined =>
  time === undefined ? undefined : new Date(time).toISOString();

/**
 * The activity time to record in status. The Lease is renewed every few seconds while an instance
 * is busy; writing each renewal to status would cost one API write per instance per renewal, so the
 * recorded time only moves once it is idleAfter/2 (between 1 s and 60 s) behind. The decision
 * itself always uses the exact time.
 */
function recordedActivity(input: HibernationInput, lastActivity: number | undefined): number | undefined {
  const recorded = plausible(parseTime(input.previous.lastActivityTime), input.now);
  if (lastActivity === undefined || recorded === undefined) return lastActivity ?? recorded;
  const interval = Math.min(
    MAX_ACTIVITY_RECORD_INTERVAL_MS,
    Math.max(MIN_ACTIVITY_RECORD_INTERVAL_MS, input.idleAfterMs / 2),
  );
  return lastActivity - recorded >= interval ? lastActivity : recorded;
}

export function decideHibernation(input: HibernationInput): HibernationDecision {
  const at = (value: string | undefined): number | undefined => plausible(parseTime(value), input.now);
  const wakeRequestedAt = at(input.wakeRequestedAt);
  const hibernatedAt = parseTime(input.previous.hibernatedAt);
  // A wake request counts as activity: the woken instance then stays up for a full idleAfter.
  const lastActivity = latest(
    at(input.createdAt),
    at(input.activityRenewedAt),
    wakeRequestedAt,
    at(input.previous.lastActivityTime),
    input.replicationsRunningAt,
  );

  if (hibernatedAt !== undefined) {
    const wake = input.keepAlive || (wakeRequestedAt !== undefined && wakeRequestedAt > hibernatedAt);
    if (!wake) {
      return {
        replicas: 0,
        reason: 'Hibernated',
        hibernatedAt: input.previous.hibernatedAt,
        ...optional('lastActivityTime', iso(recordedActivity(input, lastActivity))),
      };
    }
    return {
      replicas: 1,
      reason: input.keepAlive ? 'KeepAlive' : 'WakeRequested',
      transition: 'Wake',
      ...optional('lastActivityTime', iso(lastActivity)),
      ...(input.keepAlive ? {} : { recheckAfterMs: input.idleAfterMs }),
    };
  }

  const recorded = optional('lastActivityTime', iso(recordedActivity(input, lastActivity)));
  const readySince = at(input.readySince);
  // keepAlive keeps it up whatever happens, but a start that never ends is reported all the same.
  if (input.keepAlive)
    return {
      replicas: 1,
      reason: 'KeepAlive',
      ...recorded,
      ...(readySince === undefined ? startDeadlineOf(input, undefined) : {}),
    };
  if (readySince === undefined)
    // The StatefulSet's readiness change reconciles at once; past the deadline, idleAfter is only a safety net.
    return {
      replicas: 1,
      reason: 'AwaitingReady',
      ...recorded,
      ...startDeadlineOf(input, input.idleAfterMs),
    };
  const idleForMs = input.now - Math.max(lastActivity ?? readySince, readySince);
  if (idleForMs >= input.idleAfterMs) {
    return {
      replicas: 0,
      reason: 'IdleTimeout',
      transition: 'Hibernate',
      hibernatedAt: new Date(input.now).toISOString(),
      ...optional('lastActivityTime', iso(lastActivity)),
    };
  }
  return {
    replicas: 1,
    reason:
      input.replicationsRunningAt !== undefined && input.replicationsRunningAt === lastActivity
        ? 'ReplicationRunning'
        : 'RecentActivity',
    recheckAfterMs: input.idleAfterMs - idleForMs,
    ...recorded,
  };
}

/**
 * An awake instance that does not answer stays up: the idle clock has not started. Past the start
 * deadline the decision says so, for the status; before it, the recheck wakes the reconciler at
 * the deadline.
 */
function startDeadlineOf(
  input: HibernationInput,
  recheckWhenExceededMs: number | undefined,
): Pick<HibernationDecision, 'startDeadlineExceeded' | 'recheckAfterMs'> {
  const deadlineMs = input.startDeadlineMs ?? DEFAULT_START_DEADLINE_MS;
  const since = plausible(parseTime(input.startAttempt?.since), input.now) ?? input.now;
  const deadlineLeftMs = deadlineMs - (input.now - since);
  if (input.startAttempt?.exceeded || deadlineLeftMs <= 0)
    return {
      startDeadlineExceeded: true,
      ...(recheckWhenExceededMs === undefined ? {} : { recheckAfterMs: recheckWhenExceededMs }),
    };
  return { recheckAfterMs: deadlineLeftMs };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
