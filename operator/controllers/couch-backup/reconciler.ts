import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import {
  COUCH_BACKUP_PLURAL,
  CouchBackupEventReason,
  type CouchBackup,
  type CouchBackupStatus,
} from '../../../api/couch-backup.js';
import { DEFAULT_BACKUP_RETAIN } from '../../../api/couch-instance-schema.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { KubeClients } from '../../../kube/clients.js';
import { isNotFound } from '../../../kube/errors.js';
import type { EventRecord, EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { patchStatusIfChanged } from '../../../kube/status-patch.js';
import { parseObjectKey, objectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../kube/controller-runtime/reconciler.js';
import { errorMessage } from '../../../observability/logger.js';
import { ObjectStorage } from '../../backup/object-storage.js';
import { backupFolder, runBackup } from '../../backup/run-backup.js';
import { buildCompletedStatus, buildFinishedStatus, decideHibernatedRun } from './backup-status.js';
import type { BackupConfig } from './config.js';
import type { BackupMetrics } from './metrics.js';
import { selectBackupsToDelete } from './retention.js';
import { adoptBackup, deleteBackup, isStillRunning } from './backup-objects.js';
import { connectionTo, readStorageSecret } from './instance-access.js';
import { resolveStorageTarget, StorageTargetError } from './storage-target.js';

export interface CouchBackupInformers {
  backups: Informer<CouchBackup>;
  instances: Informer<CouchInstance>;
  /** The operator's own Secrets (the instances' admin credentials). */
  secrets: Informer<V1Secret>;
  pods: Informer<V1Pod>;
}

export interface CouchBackupReconcilerOptions {
  informers: CouchBackupInformers;
  clients: KubeClients;
  events: EventRecorder;
  config: BackupConfig;
  metrics: BackupMetrics;
  now?: () => Date;
}

const BACKUP_SLOT = 'CouchBackup';
/** How often a backup waiting for its instance (another backup running, or hibernated) looks again. */
const WAIT_RECHECK_MS = 2_000;
const HIBERNATED_RECHECK_MS = 30_000;

/**
 * Runs CouchBackups, one at a time per instance, inside the reconcile (the loop never runs one key
 * twice at once; a map here keeps two backups of one instance apart). Phases: Pending -> Running ->
 * Completed | Failed, or Skipped for a scheduled run of a hibernated instance. A Running backup
 * that this process is not running was cut off by a restart: it is Failed, and since its manifest
 * was never written, nothing counts it as a backup. Retention runs after each completion.
 */
export class CouchBackupReconciler implements Reconciler {
  private readonly recent = new RecentWrites();
  /** Instance key -> the backup key running for it in this process. */
  private readonly running = new Map<ObjectKey, ObjectKey>();
  private readonly now: () => Date;

  constructor(private readonly options: CouchBackupReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const ref = parseObjectKey(key);
    const backup = this.recent.read(key, BACKUP_SLOT, this.options.informers.backups.get(ref));
    if (!backup || backup.metadata.deletionTimestamp) {
      this.recent.forget(key);
      return DONE;
    }
    const phase = backup.status?.phase;
    if (phase === 'Completed' || phase === 'Failed' || phase === 'Skipped') return DONE;
    const namespace = ref.namespace ?? '';
    const instanceKey = objectKey({ namespace, name: backup.spec.instance });
    const instance = this.options.informers.instances.get({ namespace, name: backup.spec.instance });
    if (
      phase === 'Running' &&
      this.running.get(instanceKey) !== key &&
      (await isStillRunning(this.options.clients.customObjects, backup))
    ) {
      await this.fail(
        key,
        backup,
        instance,
        'interrupted: the operator stopped during the backup; no manifest was written, so it is no backup',
      );
      return DONE;
    }
    if (!instance) {
      await this.fail(
        key,
        backup,
        undefined,
        `CouchInstance ${backup.spec.instance} not found in namespace ${namespace}`,
      );
      return DONE;
    }
    if (instance.spec.plan !== 'paid') {
      await this.fail(key, backup, instance, 'backups need plan: paid');
      return DONE;
    }
    const others = this.backupsOf(instance).filter((other) => other.metadata.name !== backup.metadata.name);
    const hibernated = decideHibernatedRun(backup, instance, others);
    if (hibernated.action === 'skip') {
      await this.skip(key, backup, instance, hibernated.message);
      return DONE;
    }
    if (hibernated.action === 'wait') {
      await this.saveStatus(key, backup, { ...backup.status, phase: 'Pending', message: hibernated.message });
      return requeueAfter(HIBERNATED_RECHECK_MS);
    }
    const busyWith = this.running.get(instanceKey);
    if (busyWith !== undefined && busyWith !== key) {
      await this.saveStatus(key, backup, {
        ...backup.status,
        phase: 'Pending',
        message: `waiting for ${parseObjectKey(busyWith).name} to end: one backup of an instance at a time`,
      });
      return requeueAfter(WAIT_RECHECK_MS);
    }
    this.running.set(instanceKey, key);
    try {
      return await this.attempt(key, await this.adopt(key, backup, instance), instance, ctx);
    } finally {
      this.running.delete(instanceKey);
    }
  }

  private async attempt(
    key: ObjectKey,
    backup: CouchBackup,
    instance: CouchInstance,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    const { config, metrics } = this.options;
    const attempts = (backup.status?.attempts ?? 0) + 1;
    const started = this.now();
    let storage: ObjectStorage | undefined;
    const storageSecret = instance.spec.addons?.backups?.storageSecret;
    const { storageSecret: _previousSecret, ...previous } = backup.status ?? {};
    const running = await this.saveStatus(key, backup, {
      ...previous,
      phase: 'Running',
      startedAt: started.toISOString(),
      attempts,
      ...(storageSecret === undefined ? {} : { storageSecret }),
      message: `attempt ${attempts} of ${config.attempts}`,
    });
    await this.recordBoth(running, instance, {
      type: 'Normal',
      reason: CouchBackupEventReason.BackupStarted,
      message: `backup ${backup.metadata.name} of ${instance.metadata.name} started (attempt ${attempts})`,
    });
    try {
      const target = resolveStorageTarget({
        cluster: config.storage,
        secretName: storageSecret,
        secret: await readStorageSecret(this.options.clients.core, {
          namespace: instance.metadata.namespace ?? '',
          name: storageSecret,
        }),
        namespace: instance.metadata.namespace ?? '',
      });
      storage = new ObjectStorage(target, { requestTimeoutMs: config.requestTimeoutMs, maxAttempts: 3 });
      const result = await runBackup({
        couch: {
          ...connectionTo(this.options.informers, instance),
          signal: ctx.signal,
          timeoutMs: config.requestTimeoutMs,
        },
        storage,
        instance: {
          namespace: instance.metadata.namespace ?? '',
          name: instance.metadata.name ?? '',
          uid: instance.metadata.uid ?? '',
        },
        backup: backup.metadata.name ?? '',
        now: this.now,
      });
      const completed = await this.saveStatus(key, running, buildCompletedStatus(running.status, result));
      const seconds = (this.now().getTime() - started.getTime()) / 1000;
      metrics.countRun('completed', seconds);
      metrics.recordGood(
        objectKey({ namespace: instance.metadata.namespace, name: instance.metadata.name ?? '' }),
        result.manifest.completedAt,
        result.manifest.archive.size,
      );
      ctx.logger.info('backup completed', {
        backup: backup.metadata.name,
        size: result.manifest.archive.size,
        seconds,
      });
      if (result.staleUploadsAborted.length > 0)
        ctx.logger.info('aborted multipart uploads left by an interrupted backup', {
          backup: backup.metadata.name,
          keys: result.staleUploadsAborted,
        });
      if (result.staleUploadsError)
        ctx.logger.warn('could not look for multipart uploads left by an interrupted backup', {
          backup: backup.metadata.name,
          error: result.staleUploadsError,
        });
      await this.recordBoth(completed, instance, {
        type: 'Normal',
        reason: CouchBackupEventReason.BackupCompleted,
        message: `backup ${backup.metadata.name} completed: ${result.manifest.archive.size} bytes, ${completed.status?.message ?? ''} at ${result.location}`,
      });
      await this.applyRetention(instance, completed, storage, ctx);
      return DONE;
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      const message = errorMessage(err);
      // Storage settings do not mend themselves by waiting; an unreachable instance or bucket may.
      const permanent = err instanceof StorageTargetError;
      if (!permanent && attempts < config.attempts) {
        const delayMs = config.retryDelayMs * 2 ** (attempts - 1);
        ctx.logger.warn('backup attempt failed; retrying', {
          backup: backup.metadata.name,
          attempts,
          delayMs,
          error: message,
        });
        await this.saveStatus(key, running, {
          ...running.status,
          phase: 'Pending',
          message: `attempt ${attempts} failed: ${message}; retrying in ${Math.round(delayMs / 1000)}s`,
        });
        return requeueAfter(delayMs);
      }
      metrics.countRun('failed', (this.now().getTime() - started.getTime()) / 1000);
      await this.fail(
        key,
        running,
        instance,
        permanent ? message : `${message} (after ${attempts} attempts)`,
      );
      if (storage)
        await storage
          .deleteFolder(backupFolder(this.instanceRef(instance), backup.metadata.name ?? ''))
          .catch(() => undefined);
      return DONE;
    } finally {
      storage?.destroy();
    }
  }

  /** Adopts a hand-made backup (backup-objects.ts) and remembers the write, as every other one. */
  private async adopt(key: ObjectKey, backup: CouchBackup, instance: CouchInstance): Promise<CouchBackup> {
    const adopted = await adoptBackup(this.options.clients.customObjects, backup, instance);
    if (adopted !== backup) this.recent.remember(key, BACKUP_SLOT, backup, adopted);
    return adopted;
  }

  private async applyRetention(
    instance: CouchInstance,
    completed: CouchBackup,
    storage: ObjectStorage,
    ctx: ReconcileContext,
  ): Promise<void> {
    const retain = instance.spec.addons?.backups?.retain ?? DEFAULT_BACKUP_RETAIN;
    const backups = [
      completed,
      ...this.backupsOf(instance).filter((b) => b.metadata.name !== completed.metadata.name),
    ];
    for (const old of selectBackupsToDelete(backups, retain)) {
      const name = old.metadata.name ?? '';
      try {
        if (old.status?.location) await storage.deleteFolder(backupFolder(this.instanceRef(instance), name));
        await deleteBackup(this.options.clients.customObjects, instance.metadata.namespace ?? '', name);
        ctx.logger.info('backup deleted by retention', { backup: name, retain });
        await this.options.events.record(instance, {
          type: 'Normal',
          reason: CouchBackupEventReason.BackupDeleted,
          message: `backup ${name} deleted: retain keeps the ${retain} newest completed backups`,
        });
      } catch (err) {
        if (isNotFound(err)) continue;
        // The next completion tries again; an old backup kept a while longer harms nobody.
        ctx.logger.warn('could not delete an old backup', { backup: name, error: errorMessage(err) });
      }
    }
  }

  private backupsOf(instance: CouchInstance): CouchBackup[] {
    const namespace = instance.metadata.namespace ?? '';
    return this.options.informers.backups
      .list(namespace)
      .filter((b) => b.spec.instance === instance.metadata.name)
      .map(
        (b) => this.recent.read(objectKey({ namespace, name: b.metadata.name ?? '' }), BACKUP_SLOT, b) ?? b,
      );
  }

  private instanceRef(instance: CouchInstance): { namespace: string; name: string } {
    return { namespace: instance.metadata.namespace ?? '', name: instance.metadata.name ?? '' };
  }

  private async skip(
    key: ObjectKey,
    backup: CouchBackup,
    instance: CouchInstance,
    message: string,
  ): Promise<void> {
    const skipped = await this.saveStatus(
      key,
      backup,
      buildFinishedStatus(backup.status, 'Skipped', message, this.now().toISOString()),
    );
    this.options.metrics.countRun('skipped');
    await this.recordBoth(skipped, instance, {
      type: 'Normal',
      reason: CouchBackupEventReason.BackupSkipped,
      message: `backup ${backup.metadata.name} ${message}`,
    });
  }

  private async fail(
    key: ObjectKey,
    backup: CouchBackup,
    instance: CouchInstance | undefined,
    message: string,
  ): Promise<void> {
    const failed = await this.saveStatus(
      key,
      backup,
      buildFinishedStatus(backup.status, 'Failed', message, this.now().toISOString()),
    );
    const event: EventRecord = {
      type: 'Warning',
      reason: CouchBackupEventReason.BackupFailed,
      message: `backup ${backup.metadata.name} failed: ${message}`,
    };
    if (instance) await this.recordBoth(failed, instance, event);
    else await this.options.events.record(failed, event);
  }

  private async recordBoth(backup: CouchBackup, instance: CouchInstance, event: EventRecord): Promise<void> {
    await this.options.events.record(backup, event);
    await this.options.events.record(instance, event);
  }

  /** Writes the status and returns the backup as stored (or as it would be, when nothing changed). */
  private async saveStatus(
    key: ObjectKey,
    backup: CouchBackup,
    status: CouchBackupStatus,
  ): Promise<CouchBackup> {
    const written = await patchStatusIfChanged({
      customObjects: this.options.clients.customObjects,
      plural: COUCH_BACKUP_PLURAL,
      object: backup,
      status,
    });
    if (!written) return { ...backup, status };
    this.recent.remember(key, BACKUP_SLOT, backup, written);
    return written;
  }
}
