import { CouchInstanceEventReason } from '../../../api/conditions.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import { DEFAULT_IDLE_AFTER } from '../../../api/couch-instance-schema.js';
import {
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
  type CouchInstanceStatus,
} from '../../../api/couch-instance.js';
import type { KubeClients } from '../../../kube/clients.js';
import type { EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { patchStatusIfChanged } from '../../../kube/status-patch.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import type { ReconcileContext } from '../../../kube/controller-runtime/reconciler.js';
import type { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import { errorMessage } from '../../../observability/logger.js';
import { backupConditionFor } from './backup-condition.js';
import { deriveBackupSchedule } from './backup-schedule-since.js';
import type { CouchInstanceMetrics } from './metrics.js';
import { computeStatus, type StatusInput } from './status.js';

/** The slot of RecentWrites that holds the instance as this controller last wrote it. */
export const INSTANCE_SLOT = 'CouchInstance';

/**
 * Writes a CouchInstance's status: the part of the status input every pass shares (basis), the
 * write itself (remembered, so the next pass reads its own write rather than a stale cache), and
 * the passes that end early with a status that says why: an invalid spec, no room in the
 * namespace, a failed reconcile.
 */
export class InstanceStatusReport {
  constructor(
    private readonly options: {
      recent: RecentWrites;
      clients: KubeClients;
      events: EventRecorder;
      metrics: CouchInstanceMetrics;
      backups: Informer<CouchBackup>;
      now: () => Date;
    },
  ) {}

  /** The status input every pass starts from: what the instance's own spec and backups say. */
  basis(instance: CouchInstance, endpoint: string): StatusInput {
    const now = this.options.now();
    return {
      backedUp: backupConditionFor({
        instance,
        backups: this.options.backups.list(instance.metadata.namespace),
        now,
      }),
      backupSchedule: deriveBackupSchedule({
        spec: instance.spec,
        previous: instance.status?.backupSchedule,
        now: now.toISOString(),
      }),
      previous: instance.status,
      generation: instance.metadata.generation,
      now: now.toISOString(),
      endpoint,
      credentialsSecret: instance.status?.credentialsSecret,
      specViolations: [],
      idleAfter: instance.spec.hibernation?.idleAfter ?? DEFAULT_IDLE_AFTER,
    };
  }

  async save(key: ObjectKey, instance: CouchInstance, status: CouchInstanceStatus): Promise<void> {
    const written = await patchStatusIfChanged({
      customObjects: this.options.clients.customObjects,
      plural: COUCH_INSTANCE_PLURAL,
      object: instance,
      status,
    });
    if (written) this.options.recent.remember(key, INSTANCE_SLOT, instance, written);
    this.options.metrics.setStatus(key, status);
  }

  async reportInvalidSpec(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    violations: string[],
  ): Promise<void> {
    const status = computeStatus({ ...this.basis(instance, endpoint), specViolations: violations });
    const before = instance.status?.conditions?.find((c) => c.type === 'Degraded')?.message;
    if (instance.status?.phase !== 'Failed' || before !== violations.join('; ')) {
      await this.options.events.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.InvalidSpec,
        message: violations.join('; '),
      });
    }
    await this.save(key, instance, status);
  }

  /** Nothing is created for it; an Event when it first waits, status says why until there is room. */
  async reportInstanceLimit(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    message: string,
  ): Promise<void> {
    const degraded = instance.status?.conditions?.find((c) => c.type === 'Degraded');
    if (degraded?.reason !== CouchInstanceEventReason.InstanceLimitExceeded)
      await this.options.events.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.InstanceLimitExceeded,
        message,
      });
    const status = computeStatus({ ...this.basis(instance, endpoint), instanceLimit: message });
    await this.save(key, instance, status);
  }

  /** Best effort: Degraded says why the reconcile failed; the loop retries with backoff regardless. */
  async reportFailure(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    err: unknown,
    ctx: ReconcileContext,
  ): Promise<void> {
    const message = errorMessage(err);
    try {
      const status = computeStatus({ ...this.basis(instance, endpoint), reconcileError: message });
      await this.save(key, instance, status);
    } catch (statusErr) {
      ctx.logger.warn('could not write the failure to status', { error: errorMessage(statusErr) });
    }
    await this.options.events.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.ReconcileFailed,
      message,
    });
  }
}
