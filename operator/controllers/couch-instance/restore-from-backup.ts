import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { CouchInstanceEventReason } from '../../../api/conditions.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance, CouchInstanceRestoreStatus } from '../../../api/couch-instance.js';
import { podAddress } from '../../../api/pod-address.js';
import type { KubeClients } from '../../../kube/clients.js';
import type { EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { errorMessage } from '../../../observability/logger.js';
import { ObjectStorage } from '../../backup/object-storage.js';
import { backupFolder } from '../../backup/run-backup.js';
import { runRestore } from '../../backup/run-restore.js';
import type { BackupConfig } from '../couch-backup/config.js';
import { readStorageSecret } from '../couch-backup/instance-access.js';
import { resolveStorageTarget } from '../couch-backup/storage-target.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';

export const RestoreEventReason = {
  RestoreCompleted: 'RestoreCompleted',
  RestoreFailed: 'RestoreFailed',
} as const;

/**
 * spec.restore: a new instance filled from a CouchBackup of its own namespace once its CouchDB
 * answers, before it reports Ready (phase Restoring), then checked against the backup's manifest
 * (run-restore.ts). Runs once: a completed or failed restore is what status.restore says from
 * then on. The backup is read from the storage this instance's backups would use.
 */
export class RestoreFromBackup {
  constructor(
    private readonly options: {
      backups: Informer<CouchBackup>;
      pods: Informer<V1Pod>;
      clients: KubeClients;
      events: EventRecorder;
      config: BackupConfig;
      now: () => Date;
    },
  ) {}

  async ensure(request: {
    instance: CouchInstance;
    /** CouchDB answers (the StatefulSet has a ready replica). */
    ready: boolean;
    credentials: { username: string; password: string };
    logger: Logger;
    signal: AbortSignal;
  }): Promise<CouchInstanceRestoreStatus | undefined> {
    const { instance, logger } = request;
    const asked = instance.spec.restore?.backup;
    if (asked === undefined) return undefined;
    const previous = instance.status?.restore;
    if (previous && previous.backup === asked && previous.phase !== 'Restoring') return previous;
    const restoring: CouchInstanceRestoreStatus = { backup: asked, phase: 'Restoring' };
    if (!request.ready) return restoring;
    const namespace = instance.metadata.namespace ?? '';
    const backup = this.options.backups.get({ namespace, name: asked });
    if (!backup)
      return this.fail(instance, asked, `CouchBackup ${asked} not found in namespace ${namespace}`);
    if (backup.status?.phase !== 'Completed')
      return this.fail(
        instance,
        asked,
        `CouchBackup ${asked} is ${backup.status?.phase ?? 'Pending'}, not Completed`,
      );
    const pod = this.options.pods.get({
      namespace,
      name: couchInstanceNames(instance.metadata.name ?? '').pod,
    });
    const address = pod && podAddress(pod);
    if (!address) return restoring;
    let storage: ObjectStorage | undefined;
    try {
      storage = new ObjectStorage(
        resolveStorageTarget({
          cluster: this.options.config.storage,
          secretName: instance.spec.addons?.backups?.storageSecret,
          secret: await readStorageSecret(this.options.clients.core, instance),
          namespace,
        }),
        { requestTimeoutMs: this.options.config.requestTimeoutMs, maxAttempts: 3 },
      );
      logger.info('restoring from backup', { backup: asked });
      const result = await runRestore({
        couch: {
          origin: address.origin,
          credentials: request.credentials,
          timeoutMs: this.options.config.requestTimeoutMs,
          signal: request.signal,
        },
        storage,
        folder: backupFolder({ namespace, name: backup.spec.instance }, asked),
      });
      await this.options.events.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.RestoreCompleted,
        message: `restored ${result.databases} databases and ${result.documents} documents from ${asked}, verified against its manifest`,
      });
      return {
        backup: asked,
        phase: 'Completed',
        completedAt: this.options.now().toISOString(),
        databases: result.databases,
        documents: result.documents,
      };
    } catch (err) {
      if (request.signal.aborted) throw err;
      return this.fail(instance, asked, errorMessage(err));
    } finally {
      storage?.destroy();
    }
  }

  private async fail(
    instance: CouchInstance,
    backup: string,
    message: string,
  ): Promise<CouchInstanceRestoreStatus> {
    await this.options.events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.RestoreFailed,
      message: `restore from ${backup} failed: ${message}`,
    });
    return { backup, phase: 'Failed', completedAt: this.options.now().toISOString(), message };
  }
}
