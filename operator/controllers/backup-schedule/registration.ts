import type { CouchInstance } from '../../../api/couch-instance.js';
import { ownKey } from '../../../kube/controller-runtime/key-mappers.js';
import { isSpecOrMetadataChange } from '../../../kube/controller-runtime/predicates.js';
import { COUCH_BACKUP_RESOURCE, COUCH_INSTANCE_RESOURCE } from '../couch-instance/registration.js';
import type { ControllerRegistration } from '../registration.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import { BackupScheduleReconciler } from './reconciler.js';

/**
 * The backup schedule driver, one more controller over CouchInstances: an instance's spec change
 * (a new schedule) reconciles it, and each reconcile asks to be called again at the next cron time.
 */
export const backupScheduleController: ControllerRegistration = {
  name: 'backup-schedule',
  create({ informers, clients, events }) {
    const instances = informers.informerFor<CouchInstance>(COUCH_INSTANCE_RESOURCE);
    const backups = informers.informerFor<CouchBackup>(COUCH_BACKUP_RESOURCE);
    return {
      reconciler: new BackupScheduleReconciler({ instances, backups, clients, events }),
      primary: instances,
      watches: [{ informer: instances, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange }],
    };
  },
};
