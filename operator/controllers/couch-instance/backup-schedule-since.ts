import type { CouchInstanceBackupScheduleStatus, CouchInstanceSpec } from '../../../api/couch-instance.js';

/**
 * status.backupSchedule, pure: the schedule in force and since when. The moment is kept while the
 * schedule stays the same and starts over when it changes, so the schedule driver (which owes no
 * cron time before it) runs a schedule turned on or changed later at its next cron time, as cron
 * would, not at once for a time that passed before anyone asked for it.
 */
export function deriveBackupSchedule(options: {
  spec: CouchInstanceSpec;
  previous: CouchInstanceBackupScheduleStatus | undefined;
  /** RFC 3339. */
  now: string;
}): CouchInstanceBackupScheduleStatus | undefined {
  const { spec, previous, now } = options;
  const schedule = spec.plan === 'paid' ? spec.addons?.backups?.schedule : undefined;
  if (schedule === undefined) return undefined;
  return previous?.schedule === schedule ? previous : { schedule, since: now };
}
