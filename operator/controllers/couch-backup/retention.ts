import type { CouchBackup } from '../../../api/couch-backup.js';

const FINISHED_UNSUCCESSFULLY = new Set(['Failed', 'Skipped']);

function finishedAt(backup: CouchBackup): number {
  const time = backup.status?.completedAt ?? backup.metadata.creationTimestamp;
  const parsed =
    time === undefined ? NaN : Date.parse(String(time instanceof Date ? time.toISOString() : time));
  return Number.isNaN(parsed) ? 0 : parsed;
}

const newestFirst = (a: CouchBackup, b: CouchBackup): number => finishedAt(b) - finishedAt(a);

/**
 * Which of one instance's backups to delete so that `retain` completed ones are left: the oldest
 * completed ones beyond `retain`. A failed or skipped record is deleted once it is older than the
 * oldest completed backup kept, or beyond the `retain` newest of its kind, so the records a person
 * may want to read stay. Pending and running backups are never deleted. Deleting only ever follows
 * a completion, so a failure never costs an older good backup.
 */
export function selectBackupsToDelete(backups: readonly CouchBackup[], retain: number): CouchBackup[] {
  const completed = backups.filter((backup) => backup.status?.phase === 'Completed').sort(newestFirst);
  const unsuccessful = backups
    .filter((backup) => FINISHED_UNSUCCESSFULLY.has(backup.status?.phase ?? ''))
    .sort(newestFirst);
  const kept = completed.slice(0, retain);
  const oldestKept = kept.length === retain ? finishedAt(kept[kept.length - 1] as CouchBackup) : -Infinity;
  return [
    ...completed.slice(retain),
    ...unsuccessful.filter((backup, index) => index >= retain || finishedAt(backup) < oldestKept),
  ];
}
