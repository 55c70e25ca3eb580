import {
  ANNOTATION_SCHEDULED_FOR,
  COUCH_BACKUP_PLURAL,
  LABEL_BACKUP_TRIGGER,
  type CouchBackup,
} from '../../../api/couch-backup.js';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { KubeClients } from '../../../kube/clients.js';
import { callKube, isAlreadyExists } from '../../../kube/errors.js';
import type { EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { parseObjectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../kube/controller-runtime/reconciler.js';
import { buildCouchBackup } from '../../resources/couch-backup/couch-backup.js';
import { decideSchedule, InvalidScheduleError } from './schedule.js';

export interface BackupScheduleReconcilerOptions {
  instances: Informer<CouchInstance>;
  backups: Informer<CouchBackup>;
  clients: KubeClients;
  events: EventRecorder;
  now?: () => Date;
}

/** Longest wait between two looks: timers beyond this are not kept (the loop caps delays anyway). */
const MAX_RECHECK_MS = 60 * 60 * 1000;
/** How soon to look again for a schedule whose start the CouchInstance controller has not recorded yet. */
const SINCE_RECHECK_MS = 5_000;
/** Lands a recheck just after the cron time rather than just before it. */
const RECHECK_SLACK_MS = 100;

/**
 * The schedule driver: for each paid instance with addons.backups, creates the CouchBackup owed
 * by the cron schedule since it took effect (status.backupSchedule) (named after its cron time, so it is created once whatever happens) and
 * reconciles again at the next cron time. It never reads the instance's data; whether the run
 * reads or skips a hibernated instance is the CouchBackup's to decide.
 */
export class BackupScheduleReconciler implements Reconciler {
  /** Instance key -> the newest cron time created here, until the informer shows it. */
  private readonly created = new Map<ObjectKey, number>();
  private readonly invalid = new Map<ObjectKey, string>();
  private readonly now: () => Date;

  constructor(private readonly options: BackupScheduleReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const ref = parseObjectKey(key);
    const instance = this.options.instances.get(ref);
    const backups = instance?.spec.addons?.backups;
    if (!instance || instance.metadata.deletionTimestamp || !backups || instance.spec.plan !== 'paid') {
      this.created.delete(key);
      this.invalid.delete(key);
      return DONE;
    }
    const recorded = instance.status?.backupSchedule;
    // The CouchInstance controller records when this schedule took effect; its status write
    // reconciles this key again, and the recheck is only a safety net.
    if (recorded?.schedule !== backups.schedule) return requeueAfter(SINCE_RECHECK_MS);
    const now = this.now();
    let decision;
    try {
      decision = decideSchedule({
        schedule: backups.schedule,
        now,
        since: new Date(recorded.since),
        lastScheduledFor: this.lastScheduledFor(key, instance),
      });
    } catch (err) {
      if (!(err instanceof InvalidScheduleError)) throw err;
      if (this.invalid.get(key) !== backups.schedule) {
        this.invalid.set(key, backups.schedule);
        await this.options.events.record(instance, {
          type: 'Warning',
          reason: 'InvalidBackupSchedule',
          message: err.message,
        });
      }
      return DONE;
    }
    this.invalid.delete(key);
    if (decision.due) {
      const backup = buildCouchBackup({ instance, trigger: 'Scheduled', time: decision.due });
      try {
        await callKube(() =>
          this.options.clients.customObjects.createNamespacedCustomObject({
            group: SETTEE_GROUP,
            version: SETTEE_VERSION,
            plural: COUCH_BACKUP_PLURAL,
            namespace: ref.namespace ?? '',
            body: backup,
          }),
        );
        ctx.logger.info('scheduled backup created', { backup: backup.metadata.name });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      this.created.set(key, decision.due.getTime());
    }
    return requeueAfter(Math.min(MAX_RECHECK_MS, decision.next.getTime() - now.getTime() + RECHECK_SLACK_MS));
  }

  private lastScheduledFor(key: ObjectKey, instance: CouchInstance): Date | undefined {
    const times = this.options.backups
      .list(instance.metadata.namespace)
      .filter(
        (b) =>
          b.spec.instance === instance.metadata.name &&
          b.metadata.labels?.[LABEL_BACKUP_TRIGGER] === 'Scheduled',
      )
      .map((b) => Date.parse(b.metadata.annotations?.[ANNOTATION_SCHEDULED_FOR] ?? ''))
      .filter((time) => !Number.isNaN(time));
    const created = this.created.get(key);
    if (created !== undefined) times.push(created);
    return times.length > 0 ? new Date(Math.max(...times)) : undefined;
  }
}
