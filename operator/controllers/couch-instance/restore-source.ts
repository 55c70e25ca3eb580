import type { CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstanceRestoreSource } from '../../../api/couch-instance.js';

/** What spec.restore comes to, given the namespace's CouchBackups: restore one, wait, or fail. */
export type RestoreSourceDecision =
  | { action: 'restore'; backup: CouchBackup }
  | { action: 'wait'; backup: string; message: string }
  | { action: 'fail'; backup?: string; message: string };

const completedTime = (backup: CouchBackup): number => Date.parse(backup.status?.completedAt ?? '');

/**
 * Which backup a restore reads, pure. By name: that CouchBackup once Completed (a Pending or
 * Running one is waited for; a Failed or Skipped one never will be). By instance: the newest
 * Completed backup of that instance that completed at or before `before` (all of its data is from
 * before then), chosen once: `pinned` is the choice an earlier reconcile recorded in status, so a
 * backup completing later never changes what a retried restore reads.
 */
export function decideRestoreSource(input: {
  source: CouchInstanceRestoreSource;
  /** status.restore.backup from an earlier reconcile. */
  pinned: string | undefined;
  /** The CouchBackups of the restoring instance's namespace. */
  backups: readonly CouchBackup[];
  namespace: string;
  /** The restoring instance's own name. */
  self: string;
}): RestoreSourceDecision {
  const { source, namespace } = input;
  const named = input.pinned ?? source.backup;
  if (named !== undefined) {
    const backup = input.backups.find((b) => b.metadata.name === named);
    if (!backup)
      return {
        action: 'fail',
        backup: named,
        message: `CouchBackup ${named} not found in namespace ${namespace}`,
      };
    const phase = backup.status?.phase ?? 'Pending';
    if (phase === 'Completed') return { action: 'restore', backup };
    if (phase === 'Pending' || phase === 'Running')
      return {
        action: 'wait',
        backup: named,
        message: `waiting for CouchBackup ${named} to complete (${phase})`,
      };
    return { action: 'fail', backup: named, message: `CouchBackup ${named} is ${phase}, not Completed` };
  }
  const instance = source.instance ?? '';
  if (instance === input.self)
    return {
      action: 'fail',
      message: `restore.instance names this instance itself; name the instance whose backups to restore`,
    };
  const before = source.before === undefined ? Infinity : Date.parse(source.before);
  const candidates = input.backups
    .filter((b) => b.spec.instance === instance && b.status?.phase === 'Completed')
    .filter((b) => completedTime(b) <= before)
    .sort((a, b) => completedTime(b) - completedTime(a));
  const newest = candidates[0];
  if (newest) return { action: 'restore', backup: newest };
  return {
    action: 'fail',
    message:
      `no Completed CouchBackup of instance ${instance} in namespace ${namespace}` +
      (source.before === undefined ? '' : ` completed at or before ${source.before}`),
  };
}

/** A backup as its manifest in the bucket describes it. */
export interface BucketBackup {
  backup: string;
  completedAt: string;
}

/**
 * Which backup in the bucket a restore by instance reads once that instance's CouchBackups are
 * gone, pure: the one `pinned` by an earlier try, else the newest completed at or before `before`.
 */
export function chooseBucketBackup(input: {
  found: readonly BucketBackup[];
  before: string | undefined;
  pinned: string | undefined;
}): BucketBackup | undefined {
  if (input.pinned !== undefined) return input.found.find((b) => b.backup === input.pinned);
  const before = input.before === undefined ? Infinity : Date.parse(input.before);
  const time = (b: BucketBackup): number => Date.parse(b.completedAt);
  return input.found.filter((b) => time(b) <= before).sort((a, b) => time(b) - time(a))[0];
}

/**
 * Whether a restore by instance reads the bucket rather than CouchBackups: when the namespace holds
 * no CouchBackup of that instance at all (it was deleted, and its backups with it). While any is
 * left, the CouchBackups are the record, as they say which backups failed.
 */
export function restoresFromBucket(input: {
  source: CouchInstanceRestoreSource;
  backups: readonly CouchBackup[];
  self: string;
}): boolean {
  const { instance } = input.source;
  return (
    instance !== undefined &&
    instance !== input.self &&
    !input.backups.some((b) => b.spec.instance === instance)
  );
}
