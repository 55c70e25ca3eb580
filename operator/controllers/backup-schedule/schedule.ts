import { CronExpressionParser } from 'cron-parser';

/** The schedule of spec.addons.backups cannot be read by cron-parser; the message says why. */
export class InvalidScheduleError extends Error {
  constructor(
    readonly schedule: string,
    options?: { cause?: unknown },
  ) {
    super(
      `addons.backups.schedule "${schedule}" is not a valid cron expression: ${(options?.cause as Error | undefined)?.message ?? 'unreadable'}`,
      options,
    );
    this.name = 'InvalidScheduleError';
  }
}

export interface ScheduleInput {
  /** Five-field cron, UTC (or @daily and its kin). */
  schedule: string;
  now: Date;
  /** When the schedule took effect (status.backupSchedule.since): runs due before it are not owed. */
  since: Date;
  /** The newest cron time a scheduled backup was created for, if any. */
  lastScheduledFor: Date | undefined;
}

export interface ScheduleDecision {
  /** A run is owed for this cron time: create its backup now. Only the latest missed time is owed. */
  due?: Date;
  /** The next cron time after now: reconcile again then. */
  next: Date;
  /** The time between two runs around now, for "older than twice the period". */
  periodMs: number;
}

function parse(schedule: string, currentDate: Date) {
  try {
    // Six-field (seconds) expressions are refused by the CRD's pattern; here only five are read.
    return CronExpressionParser.parse(schedule, { currentDate, tz: 'UTC', strict: false });
  } catch (err) {
    throw new InvalidScheduleError(schedule, { cause: err });
  }
}

/** Whether the schedule parses; the message of the error when it does not. */
export function scheduleProblem(schedule: string): string | undefined {
  try {
    parse(schedule, new Date(0));
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * When a scheduled backup is owed, pure: the latest cron time at or before now, unless a backup
 * was already made for it (or for a later one) or it came before the schedule took effect (a
 * schedule turned on at 10:00 for 03:00 first runs tomorrow at 03:00, as cron would). Missed runs
 * are not caught up one by one (an operator that was down for a week owes one backup, not seven).
 */
export function decideSchedule(input: ScheduleInput): ScheduleDecision {
  const expression = parse(input.schedule, input.now);
  const next = expression.next().toDate();
  const afterNext = parse(input.schedule, next).next().toDate();
  // `now` itself may be a cron time: prev() is strictly before the current date, so look from 1 ms on.
  const latest = parse(input.schedule, new Date(input.now.getTime() + 1))
    .prev()
    .toDate();
  const periodMs = afterNext.getTime() - next.getTime();
  const owed =
    latest.getTime() >= input.since.getTime() &&
    (input.lastScheduledFor === undefined || latest.getTime() > input.lastScheduledFor.getTime());
  return { ...(owed ? { due: latest } : {}), next, periodMs };
}
