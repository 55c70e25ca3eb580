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
import { RestoreVerificationError, runRestore } from '../../backup/run-restore.js';
import type { BackupConfig } from '../couch-backup/config.js';
import { readStorageSecret } from '../couch-backup/instance-access.js';
import { resolveStorageTarget, StorageTargetError } from '../couch-backup/storage-target.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';
import { decideRestoreSource } from './restore-source.js';

/** How often a restore waiting for its backup to complete looks again. */
const WAIT_RECHECK_MS = 5_000;

/** Where the restore stands, and when the reconciler should look again while it is not done. */
export interface RestoreOutcome {
  status: CouchInstanceRestoreStatus;
  recheckAfterMs?: number;
}

/**
 * spec.restore: a new instance filled from a CouchBackup of its own namespace (named, or an
 * instance's newest: restore-source.ts) once its CouchDB answers, before it reports Ready (phase
 * Restoring), then checked against the backup's manifest (run-restore.ts). The backup is read from
 * the object storage it was written to (its status.storageSecret, else the cluster's), which need
 * not be the restoring instance's. A failed try is tried again after a delay that doubles, as a
 * backup's is (SETTEE_BACKUP_ATTEMPTS, SETTEE_BACKUP_RETRY_DELAY): writes with their revisions
 * (`new_edits: false`) are idempotent, so a retry over a half-restored instance is safe. What
 * cannot mend by waiting (no such backup, a bad archive, bad storage settings) fails at once.
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
  }): Promise<RestoreOutcome | undefined> {
    const { instance } = request;
    const source = instance.spec.restore;
    if (source === undefined) return undefined;
    const previous = instance.status?.restore;
    if (previous && previous.phase !== 'Restoring') return { status: previous };
    const namespace = instance.metadata.namespace ?? '';
    const decision = decideRestoreSource({
      source,
      pinned: previous?.backup,
      backups: this.options.backups.list(namespace),
      namespace,
      self: instance.metadata.name ?? '',
    });
    if (decision.action === 'fail') return this.fail(instance, previous, decision.backup, decision.message);
    if (decision.action === 'wait')
      return {
        status: { ...previous, backup: decision.backup, phase: 'Restoring', message: decision.message },
        recheckAfterMs: WAIT_RECHECK_MS,
      };
    const { backup } = decision;
    const name = backup.metadata.name ?? '';
    // A retry's message says why the last try failed; a wait's is over once the backup is here.
    const { message: _waited, ...settled } = previous ?? {};
    const restoring: CouchInstanceRestoreStatus = {
      ...(previous?.nextAttemptAt === undefined ? settled : previous),
      backup: name,
      phase: 'Restoring',
    };
    const waitMs = Date.parse(previous?.nextAttemptAt ?? '') - this.options.now().getTime();
    if (waitMs > 0) return { status: restoring, recheckAfterMs: waitMs };
    if (!request.ready) return { status: restoring };
    const pod = this.options.pods.get({
      namespace,
      name: couchInstanceNames(instance.metadata.name ?? '').pod,
    });
    const address = pod && podAddress(pod);
    if (!address) return { status: restoring };
    return this.attempt({ ...request, backup, restoring, origin: address.origin });
  }

  private async attempt(request: {
    instance: CouchInstance;
    backup: CouchBackup;
    restoring: CouchInstanceRestoreStatus;
    origin: string;
    credentials: { username: string; password: string };
    logger: Logger;
    signal: AbortSignal;
  }): Promise<RestoreOutcome> {
    const { instance, backup, logger } = request;
    const { config, now } = this.options;
    const namespace = instance.metadata.namespace ?? '';
    const name = backup.metadata.name ?? '';
    const attempts = (request.restoring.attempts ?? 0) + 1;
    let storage: ObjectStorage | undefined;
    try {
      storage = new ObjectStorage(
        resolveStorageTarget({
          cluster: config.storage,
          secretName: backup.status?.storageSecret,
          secret: await readStorageSecret(this.options.clients.core, {
            namespace,
            name: backup.status?.storageSecret,
          }),
          namespace,
        }),
        { requestTimeoutMs: config.requestTimeoutMs, maxAttempts: 3 },
      );
      logger.info('restoring from backup', { backup: name, attempts });
      const result = await runRestore({
        couch: {
          origin: request.origin,
          credentials: request.credentials,
          timeoutMs: config.requestTimeoutMs,
          signal: request.signal,
        },
        storage,
        folder: backupFolder({ namespace, name: backup.spec.instance }, name),
      });
      await this.options.events.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.RestoreCompleted,
        message: `restored ${result.databases} databases and ${result.documents} documents from ${name}, verified against its manifest`,
      });
      return {
        status: {
          backup: name,
          phase: 'Completed',
          completedAt: now().toISOString(),
          databases: result.databases,
          documents: result.documents,
          attempts,
        },
      };
    } catch (err) {
      if (request.signal.aborted) throw err;
      const message = errorMessage(err);
      const permanent = err instanceof RestoreVerificationError || err instanceof StorageTargetError;
      if (permanent || attempts >= config.attempts)
        return this.fail(
          instance,
          { ...request.restoring, attempts },
          name,
          permanent ? message : `${message} (after ${attempts} attempts)`,
        );
      const delayMs = config.retryDelayMs * 2 ** (attempts - 1);
      const retry = `attempt ${attempts} failed: ${message}; retrying in ${Math.ceil(delayMs / 1000)}s`;
      logger.warn('restore attempt failed; retrying', { backup: name, attempts, delayMs, error: message });
      await this.options.events.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.RestoreRetrying,
        message: `restore from ${name}: ${retry}`,
      });
      return {
        status: {
          ...request.restoring,
          attempts,
          nextAttemptAt: new Date(now().getTime() + delayMs).toISOString(),
          message: retry,
        },
        recheckAfterMs: delayMs,
      };
    } finally {
      storage?.destroy();
    }
  }

  private async fail(
    instance: CouchInstance,
    previous: CouchInstanceRestoreStatus | undefined,
    backup: string | undefined,
    message: string,
  ): Promise<RestoreOutcome> {
    await this.options.events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.RestoreFailed,
      message: `restore${backup === undefined ? '' : ` from ${backup}`} failed: ${message}`,
    });
    const { nextAttemptAt: _retryNoMore, ...rest } = previous ?? {};
    return {
      status: {
        ...rest,
        ...(backup === undefined ? {} : { backup }),
        phase: 'Failed',
        completedAt: this.options.now().toISOString(),
        message,
      },
    };
  }
}
