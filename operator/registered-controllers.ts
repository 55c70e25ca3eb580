import { backupScheduleController } from './controllers/backup-schedule/registration.js';
import { couchBackupController } from './controllers/couch-backup/registration.js';
import { couchInstanceController } from './controllers/couch-instance/registration.js';
import { queueBindingController } from './controllers/queue-binding/registration.js';
import type { ControllerRegistration } from './controllers/registration.js';

/**
 * Every controller the operator runs; main.ts builds, starts and stops them from this list only.
 * Add a controller by importing its registration (from operator/controllers/<name>/) here.
 */
export const REGISTERED_CONTROLLERS: readonly ControllerRegistration[] = [
  couchInstanceController,
  queueBindingController,
  couchBackupController,
  backupScheduleController,
];
