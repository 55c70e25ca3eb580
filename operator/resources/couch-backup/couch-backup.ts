import crypto from 'node:crypto';
import { LABEL_INSTANCE, SETTEE_API_VERSION } from '../../../api/contract.js';
import {
  ANNOTATION_SCHEDULED_FOR,
  COUCH_BACKUP_KIND,
  LABEL_BACKUP_TRIGGER,
  type CouchBackup,
  type CouchBackupTrigger,
} from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { buildOwnerReference } from '../owner-reference.js';

const MAX_NAME_LENGTH = 253;

/** `20260124T030000Z`-like, lower case: object names allow no upper case and no colon. */
function compactTime(time: Date): string {
  return time.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '').toLowerCase();
}

/**
 * The name of a backup of `instance` for `time`: the same run always gets the same name, so a
 * second create of it (two reconciles, a restarted operator) is refused by the API server instead
 * of starting a second backup. Long instance names are cut and a digest keeps them apart.
 */
export function couchBackupName(instance: string, trigger: CouchBackupTrigger, time: Date): string {
  const suffix = `-${trigger === 'Hibernation' ? 'final' : 'sched'}-${compactTime(time)}`;
  if (instance.length + suffix.length <= MAX_NAME_LENGTH) return `${instance}${suffix}`;
  const digest = crypto.createHash('sha256').update(instance).digest('hex').slice(0, 8);
  return `${instance.slice(0, MAX_NAME_LENGTH - suffix.length - 9)}-${digest}${suffix}`;
}

/** A CouchBackup the operator asks for: a scheduled run, or the final backup before hibernation. */
export function buildCouchBackup(options: {
  instance: CouchInstance;
  trigger: Exclude<CouchBackupTrigger, 'Manual'>;
  /** The cron time for a scheduled run; the moment of the decision for a final one. */
  time: Date;
}): CouchBackup {
  const { instance, trigger, time } = options;
  const name = instance.metadata.name ?? '';
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: COUCH_BACKUP_KIND,
    metadata: {
      name: couchBackupName(name, trigger, time),
      namespace: instance.metadata.namespace ?? '',
      labels: { [LABEL_INSTANCE]: name, [LABEL_BACKUP_TRIGGER]: trigger },
      annotations: trigger === 'Scheduled' ? { [ANNOTATION_SCHEDULED_FOR]: time.toISOString() } : {},
      ownerReferences: [buildOwnerReference(instance)],
    },
    spec: { instance: name, trigger },
  };
}
