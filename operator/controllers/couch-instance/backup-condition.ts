import { ConditionReason, ConditionType } from '../../../api/conditions.js';
import { SKIPPED_UNCHANGED_MESSAGE, type CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { decideSchedule, scheduleProblem } from '../backup-schedule/schedule.js';
import type { ConditionUpdate } from '../conditions.js';

export interface BackupConditionInput {
  /** The instance's backups (any trigger). */
  backups: readonly CouchBackup[];
  /** The schedule's period in ms (cron-parser's distance between two runs around now). */
  periodMs: number;
  /** Epoch ms. */
  now: number;
}

function finishedAt(backup: CouchBackup): number {
  return Date.parse(backup.status?.completedAt ?? '') || 0;
}

const newest = (backups: readonly CouchBackup[]): CouchBackup | undefined =>
  [...backups].sort((a, b) => finishedAt(b) - finishedAt(a))[0];

/**
 * The BackedUp condition of an instance with the backups add-on, pure. False when the newest
 * backup failed, or when the newest good one (a completed backup, or a scheduled run skipped
 * because nothing changed, which confirms it) is older than twice the schedule's period; Unknown
 * before the first backup; True otherwise.
 */
export function computeBackupCondition(input: BackupConditionInput): ConditionUpdate {
  const type = ConditionType.BackedUp;
  const completed = newest(input.backups.filter((b) => b.status?.phase === 'Completed'));
  const confirmed = newest(
    input.backups.filter(
      (b) =>
        b.status?.phase === 'Completed' ||
        (b.status?.phase === 'Skipped' && b.status.message === SKIPPED_UNCHANGED_MESSAGE),
    ),
  );
  const failed = newest(input.backups.filter((b) => b.status?.phase === 'Failed'));
  if (failed && (!completed || finishedAt(failed) > finishedAt(completed)))
    return {
      type,
      status: 'False',
      reason: ConditionReason.BackupFailed,
      message: `the newest backup, ${failed.metadata.name}, failed: ${failed.status?.message ?? 'no reason recorded'}`,
    };
  if (!completed || !confirmed)
    return {
      type,
      status: 'Unknown',
      reason: ConditionReason.NoBackupYet,
      message: 'no backup has completed yet',
    };
  const ageMs = input.now - finishedAt(confirmed);
  if (ageMs > 2 * input.periodMs)
    return {
      type,
      status: 'False',
      reason: ConditionReason.BackupOverdue,
      message: `the newest good backup, ${completed.metadata.name}, is ${Math.round(ageMs / 60_000)} minutes old: more than twice the schedule's period`,
    };
  return {
    type,
    status: 'True',
    reason: ConditionReason.BackupCompleted,
    message: `backup ${completed.metadata.name} completed at ${completed.status?.completedAt ?? ''}`,
  };
}

/** The BackedUp condition of `instance`, for a paid one with the add-on and a schedule cron-parser reads. */
export function backupConditionFor(options: {
  instance: CouchInstance;
  /** Backups of the instance's namespace (any instance's; this picks its own). */
  backups: readonly CouchBackup[];
  now: Date;
}): ConditionUpdate | undefined {
  const { instance, now } = options;
  const schedule = instance.spec.addons?.backups?.schedule;
  if (instance.spec.plan !== 'paid' || schedule === undefined || scheduleProblem(schedule)) return undefined;
  const periodMs = decideSchedule({ schedule, now, since: now, lastScheduledFor: undefined }).periodMs;
  const backups = options.backups.filter((backup) => backup.spec.instance === instance.metadata.name);
  return computeBackupCondition({ backups, periodMs, now: now.getTime() });
}
