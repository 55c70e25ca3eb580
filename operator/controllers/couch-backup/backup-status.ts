import {
  SKIPPED_UNCHANGED_MESSAGE,
  type CouchBackup,
  type CouchBackupStatus,
} from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { BackupResult } from '../../backup/run-backup.js';

/** The status of a backup that completed: what the manifest says, in the fields kubectl shows. */
export function buildCompletedStatus(
  previous: CouchBackupStatus | undefined,
  result: BackupResult,
): CouchBackupStatus {
  const { manifest } = result;
  return {
    ...previous,
    phase: 'Completed',
    startedAt: manifest.startedAt,
    completedAt: manifest.completedAt,
    size: manifest.archive.size,
    databases: manifest.totals.databases,
    documents: manifest.totals.documents,
    location: result.location,
    manifest: result.manifestLocation,
    couchdbVersion: manifest.couchdbVersion,
    sha256: manifest.archive.sha256,
    dataFingerprint: manifest.dataFingerprint,
    message: `${manifest.totals.databases} databases, ${manifest.totals.documents} documents, ${manifest.totals.attachments} attachments`,
  };
}

export function buildFinishedStatus(
  previous: CouchBackupStatus | undefined,
  phase: 'Failed' | 'Skipped',
  message: string,
  now: string,
): CouchBackupStatus {
  return { ...previous, phase, completedAt: now, message };
}

const isHibernated = (instance: CouchInstance): boolean =>
  instance.status?.hibernatedAt !== undefined ||
  instance.status?.phase === 'Hibernated' ||
  instance.status?.phase === 'Hibernating';

export type HibernatedRunDecision =
  { action: 'run' } | { action: 'skip'; message: string } | { action: 'wait'; message: string };

function finishedTime(backup: CouchBackup): number {
  return Date.parse(backup.status?.completedAt ?? '') || 0;
}

/**
 * What a backup does about an instance that is hibernated, pure: nothing reads a hibernated
 * instance, since that would wake it. A scheduled run is skipped, recorded with why: unchanged
 * since the last backup (the last thing that happened is a completed backup, taken or confirmed
 * before it hibernated), or changed but not backed up because the final backup before hibernation
 * failed. A manual backup waits for the instance to wake.
 */
export function decideHibernatedRun(
  backup: CouchBackup,
  instance: CouchInstance,
  others: readonly CouchBackup[],
): HibernatedRunDecision {
  if (!isHibernated(instance)) return { action: 'run' };
  if (backup.spec.trigger !== 'Scheduled')
    return {
      action: 'wait',
      message: 'waiting for the instance to wake: a backup never wakes a hibernated instance',
    };
  const lastCompleted = Math.max(
    0,
    ...others.filter((b) => b.status?.phase === 'Completed').map(finishedTime),
  );
  const lastFinalFailed = Math.max(
    0,
    ...others
      .filter((b) => b.spec.trigger === 'Hibernation' && b.status?.phase === 'Failed')
      .map(finishedTime),
  );
  if (lastCompleted === 0 && lastFinalFailed === 0)
    return {
      action: 'skip',
      message: 'skipped: the instance is hibernated and has no backup yet; it is backed up once it wakes',
    };
  if (lastFinalFailed > lastCompleted)
    return {
      action: 'skip',
      message:
        'skipped: the instance is hibernated and its final backup before hibernation failed; it is backed up once it wakes',
    };
  return { action: 'skip', message: SKIPPED_UNCHANGED_MESSAGE };
}
