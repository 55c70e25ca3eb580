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
import { listBucketBackups } from '../../backup/bucket-backups.js';
import { backupFolder, instanceFolder } from '../../backup/run-backup.js';
import { RestoreVerificationError, runRestore } from '../../backup/run-restore.js';
import type { BackupConfig } from '../couch-backup/config.js';
import { readStorageSecret } from '../couch-backup/instance-access.js';
import { resolveStorageTarget, StorageTargetError } from '../couch-backup/storage-target.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';
import { chooseBucketBackup, decideRestoreSource, restoresFromBucket } from './restore-source.js';

/** spec.restore names a backup that is not there to read; waiting will not bring it. */
export class RestoreSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreSourceError';
  }
}

/** What a restore reads: a CouchBackup, or, its instance and CouchBackups gone, the bucket. */
type RestoreTarget =
  { kind: 'backup'; backup: CouchBackup } | { kind: 'bucket'; instance: string; before: string | undefined };

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
 * not be the restoring instance's. An instance deleted with its CouchBackups is restored from the
 * manifests its backups left in the bucket (bucket-backups.ts). A failed try is tried again after a delay that doubles, as a
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
    const backups = this.options.backups.list(namespace);
    const self = instance.metadata.name ?? '';
    let target: RestoreTarget;
    if (source.instance !== undefined && restoresFromBucket({ source, backups, self }))
      target = { kind: 'bucket', instance: source.instance, before: source.before };
    else {
      const decision = decideRestoreSource({ source, pinned: previous?.backup, backups, namespace, self });
      if (decision.action === 'fail') return this.fail(instance, previous, decision.backup, decision.message);
      if (decision.action === 'wait')
        return {
          status: { ...previous, backup: decision.backup, phase: 'Restoring', message: decision.message },
          recheckAfterMs: WAIT_RECHECK_MS,
        };
      target = { kind: 'backup', backup: decision.backup };
    }
    // A retry's message says why the last try failed; a wait's is over once the backup is here.
    const { message: _waited, ...settled } = previous ?? {};
    const name = target.kind === 'backup' ? target.backup.metadata.name : previous?.backup;
    const restoring: CouchInstanceRestoreStatus = {
      ...(previous?.nextAttemptAt === undefined ? settled : previous),
      ...(name === undefined ? {} : { backup: name }),
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
    return this.attempt({ ...request, target, restoring, origin: address.origin });
  }

  /**
   * The backup's name, folder and storage: a CouchBackup's own, or, restoring from the bucket, the
   * newest fitting manifest under the gone instance's folder (in this namespace's folder only, so
   * never another tenant's), read with the restoring instance's storage settings.
   */
  private async locate(
    target: RestoreTarget,
    instance: CouchInstance,
    pinned: string | undefined,
  ): Promise<{ name: string; folder: string; storage: ObjectStorage }> {
    const { config, clients } = this.options;
    const namespace = instance.metadata.namespace ?? '';
    const storageSecret =
      target.kind === 'backup'
        ? target.backup.status?.storageSecret
        : instance.spec.addons?.backups?.storageSecret;
    const storage = new ObjectStorage(
      resolveStorageTarget({
        cluster: config.storage,
        secretName: storageSecret,
        secret: await readStorageSecret(clients.core, { namespace, name: storageSecret }),
        namespace,
      }),
      { requestTimeoutMs: config.requestTimeoutMs, maxAttempts: 3 },
    );
    if (target.kind === 'backup') {
      const name = target.backup.metadata.name ?? '';
      return { name, folder: backupFolder({ namespace, name: target.backup.spec.instance }, name), storage };
    }
    try {
      const gone = { namespace, name: target.instance };
      const found = await listBucketBackups(storage, gone);
      const chosen = chooseBucketBackup({ found, before: target.before, pinned });
      if (!chosen)
        throw new RestoreSourceError(
          pinned === undefined
            ? `no CouchBackup of instance ${target.instance} in namespace ${namespace}, and no completed backup of it in ` +
                `${storage.location(instanceFolder(gone))}/` +
                (target.before === undefined ? '' : ` completed at or before ${target.before}`)
            : `backup ${pinned} of instance ${target.instance} is no longer in ${storage.location(instanceFolder(gone))}/`,
        );
      return { name: chosen.backup, folder: backupFolder(gone, chosen.backup), storage };
    } catch (err) {
      storage.destroy();
      throw err;
    }
  }

  private async attempt(request: {
    instance: CouchInstance;
    target: RestoreTarget;
    restoring: CouchInstanceRestoreStatus;
    origin: string;
    credentials: { username: string; password: string };
    logger: Logger;
    signal: AbortSignal;
  }): Promise<RestoreOutcome> {
    const { instance, target, logger } = request;
    const { config, now } = this.options;
    const attempts = (request.restoring.attempts ?? 0) + 1;
    let name = request.restoring.backup;
    let storage: ObjectStorage | undefined;
    try {
      const located = await this.locate(target, instance, request.restoring.backup);
      ({ name, storage } = located);
      logger.info('restoring from backup', { backup: name, fromBucket: target.kind === 'bucket', attempts });
      const result = await runRestore({
        couch: {
          origin: request.origin,
          credentials: request.credentials,
          timeoutMs: config.requestTimeoutMs,
          signal: request.signal,
        },
        storage,
        folder: located.folder,
      });
      const fromBucket =
        target.kind === 'bucket'
          ? ` (read from ${storage.location(located.folder)}/: instance ${target.instance} and its CouchBackups are gone)`
          : '';
      await this.options.events.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.RestoreCompleted,
        message: `restored ${result.databases} databases and ${result.documents} documents from ${name}${fromBucket}, verified against its manifest`,
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
      const permanent =
        err instanceof RestoreVerificationError ||
        err instanceof StorageTargetError ||
        err instanceof RestoreSourceError;
      const tried = { ...request.restoring, ...(name === undefined ? {} : { backup: name }), attempts };
      if (permanent || attempts >= config.attempts)
        return this.fail(
          instance,
          tried,
          name,
          permanent ? message : `${message} (after ${attempts} attempts)`,
        );
      const delayMs = config.retryDelayMs * 2 ** (attempts - 1);
      const retry = `attempt ${attempts} failed: ${message}; retrying in ${Math.ceil(delayMs / 1000)}s`;
      logger.warn('restore attempt failed; retrying', { backup: name, attempts, delayMs, error: message });
      await this.options.events.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.RestoreRetrying,
        message: `restore${name === undefined ? '' : ` from ${name}`}: ${retry}`,
      });
      return {
        status: {
          ...tried,
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
