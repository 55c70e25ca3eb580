import type { Logger } from 'winston';
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Lease,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { CouchInstanceEventReason } from '../../../api/conditions.js';
import { activityLeaseName, renderEndpoint } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { unschedulableMessage } from '../../../api/pod-scheduling.js';
import { compareQuantities } from '../../../api/quantity.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import type { KubeClients } from '../../../kube/clients.js';
import { isConflict } from '../../../kube/errors.js';
import type { EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { parseObjectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import type { WatchSource } from '../../../kube/controller-runtime/controller.js';
import type { KeyMapper } from '../../../kube/controller-runtime/key-mappers.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../kube/controller-runtime/reconciler.js';
import { adminHashSchemeFor } from '../../resources/couch-instance/admin-password-hash.js';
import { digestOf } from '../../resources/applied-digest.js';
import { buildCouchDbConfigMap, serverUuidOf } from '../../resources/couch-instance/couchdb-config.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';
import { resolveSpec } from '../../resources/couch-instance/resolved-spec.js';
import { buildClientService, buildHeadlessService } from '../../resources/couch-instance/services.js';
import { buildStatefulSet, claimShapeOf } from '../../resources/couch-instance/statefulset.js';
import type { CouchInstanceConfig } from './config.js';
import { HibernationGate } from './hibernation-gate.js';
import type { CouchInstanceMetrics } from './metrics.js';
import { notReadyCauseOf } from './not-ready-cause.js';
import { OwnedObjects } from './owned-objects.js';
import type { BackupConfig } from '../couch-backup/config.js';
import { RestoreFromBackup } from './restore-from-backup.js';
import { UsageMeter } from './usage-meter.js';
import { firstStartNotServing, SYSTEM_DATABASES_RECHECK_MS } from './system-databases.js';
import { accrueUsage, meteringDueInMs } from './metering.js';
import { foldRequestUsage } from './request-usage.js';
import { findInstanceLimitExcess } from './instance-limit.js';
import { pruneRequestUsage } from './prune-request-usage.js';
import { computePhase, computeStatus, type StatusInput } from './status.js';
import { INSTANCE_SLOT, InstanceStatusReport } from './status-report.js';
import { announceTransitions, announceVolumeGrowth } from './transition-events.js';
import { findSpecViolations } from './validate-spec.js';
import { VolumeGrowth } from './volume-growth.js';

export interface CouchInstanceInformers {
  instances: Informer<CouchInstance>;
  statefulSets: Informer<V1StatefulSet>;
  services: Informer<V1Service>;
  configMaps: Informer<V1ConfigMap>;
  secrets: Informer<V1Secret>;
  /** The gateway's activity Leases (contract.ts). */
  leases: Informer<V1Lease>;
  /** Instance pods, a cache only: where to ask an idle instance about its replication jobs. */
  pods: Informer<V1Pod>;
  /** Its backups: a final one before hibernating (final-backup.ts) holds the instance up. */
  backups: Informer<CouchBackup>;
}

export interface CouchInstanceReconcilerOptions {
  informers: CouchInstanceInformers;
  clients: KubeClients;
  events: EventRecorder;
  config: CouchInstanceConfig;
  metrics: CouchInstanceMetrics;
  /** The backups' settings: the final backup's and the restore's timeouts, the cluster's object storage. */
  backups: BackupConfig;
  /** The controller's logger, for what concerns the process rather than one reconcile. */
  logger: Logger;
  now?: () => Date;
}

/** The idle check lands just after idleAfter has passed, not just before it. */
const IDLE_RECHECK_SLACK_MS = 50;
/** An instance waiting for room in its namespace looks again this often (a delete elsewhere makes room). */
const INSTANCE_LIMIT_RECHECK_MS = 15_000;

/**
 * Reconciles one CouchInstance: validate the spec, ensure the admin Secret, decide hibernation,
 * apply the ConfigMap, Services and StatefulSet, write status, and record an Event for each
 * transition. Level-triggered: every pass starts from the caches, never from the event that woke it.
 * The steps live beside it, one job each: the replica decision with its live checks
 * (hibernation-gate.ts), status writes and early-ending passes (status-report.ts), Events of what
 * changed (transition-events.ts), restores (restore-from-backup.ts) and usage (usage-meter.ts).
 */
export class CouchInstanceReconciler implements Reconciler {
  private readonly recent = new RecentWrites();
  private readonly owned: OwnedObjects;
  private readonly volumes: VolumeGrowth;
  private readonly hibernation: HibernationGate;
  private readonly usage: UsageMeter;
  private readonly restorer: RestoreFromBackup;
  private readonly report: InstanceStatusReport;
  private readonly now: () => Date;

  constructor(private readonly options: CouchInstanceReconcilerOptions) {
    this.owned = new OwnedObjects(options.clients, this.recent, options.logger);
    this.volumes = new VolumeGrowth(options.clients.core);
    this.now = options.now ?? (() => new Date());
    this.hibernation = new HibernationGate({
      informers: options.informers,
      clients: options.clients,
      metrics: options.metrics,
      replicationCheckTimeoutMs: options.config.replicationCheckTimeoutMs,
      backupRequestTimeoutMs: options.backups.requestTimeoutMs,
      startDeadlineMs: options.config.startDeadlineMs,
      now: this.now,
    });
    this.usage = new UsageMeter({
      intervalMs: options.config.usageMeasureIntervalMs,
      timeoutMs: options.config.usageMeasureTimeoutMs,
      now: this.now,
    });
    this.report = new InstanceStatusReport({
      recent: this.recent,
      clients: options.clients,
      events: options.events,
      metrics: options.metrics,
      backups: options.informers.backups,
      now: this.now,
    });
    this.restorer = new RestoreFromBackup({
      backups: options.informers.backups,
      pods: options.informers.pods,
      clients: options.clients,
      events: options.events,
      config: options.backups,
      now: this.now,
    });
  }

  /** The watch source of an owned kind this reconciler writes (OwnedObjects.watchSource; registration.ts). */
  watchWritten<T extends KubernetesObject>(informer: Informer<T>, toOwner: KeyMapper): WatchSource<T> {
    return this.owned.watchSource(informer, toOwner);
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const ref = parseObjectKey(key);
    const instance = this.recent.read(key, INSTANCE_SLOT, this.options.informers.instances.get(ref));
    if (!instance || instance.metadata.deletionTimestamp) {
      // Garbage collection deletes what it owned (controller owner references); only memory is left.
      this.forget(key);
      return DONE;
    }
    const endpoint = renderEndpoint(this.options.config.endpointTemplate, {
      namespace: ref.namespace ?? '',
      name: ref.name,
    });
    const violations = findSpecViolations(instance.spec, this.options.config.freeEnvelope);
    if (violations.length > 0) {
      await this.report.reportInvalidSpec(key, instance, endpoint, violations);
      return DONE;
    }
    const overLimit = this.instanceLimitExcess(instance);
    if (overLimit !== undefined) {
      await this.report.reportInstanceLimit(key, instance, endpoint, overLimit);
      return requeueAfter(INSTANCE_LIMIT_RECHECK_MS);
    }
    try {
      return await this.converge(key, instance, endpoint, ctx);
    } catch (err) {
      if (!isConflict(err) && !ctx.signal.aborted)
        await this.report.reportFailure(key, instance, endpoint, err, ctx);
      throw err;
    }
  }

  private async converge(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    const { informers, config } = this.options;
    const namespace = instance.metadata.namespace ?? '';
    const name = instance.metadata.name ?? '';
    const names = couchInstanceNames(name);
    const spec = resolveSpec(instance.spec, {
      version: config.defaultVersion,
      storageSize: config.freeEnvelope.storage,
      resources: config.defaultResources,
    });

    const hashScheme = adminHashSchemeFor(spec.version);
    const { credentials, adminPasswordHash, created } = await this.owned.ensureCredentials({
      owner: key,
      informer: informers.secrets,
      instance,
      secretName: names.adminSecret,
      endpoint,
      hashScheme,
    });
    if (created) {
      ctx.logger.info('admin credentials generated', { secret: names.adminSecret });
      await this.options.events.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.CredentialsCreated,
        message: `generated admin credentials in Secret ${names.adminSecret}`,
      });
    }

    const configMap = buildCouchDbConfigMap(instance, {
      serverUuid: serverUuidOf(instance),
      adminUsername: credentials.username,
      adminPasswordHash,
      hashScheme,
      vendorName: config.vendorName,
    });
    const existingStatefulSet = this.owned.current(key, informers.statefulSets, namespace, names.statefulSet);
    const existingClaim = claimShapeOf(existingStatefulSet);
    if (existingClaim && compareQuantities(spec.storage.size, existingClaim.size) > 0) {
      await this.growVolume(key, instance, names.dataVolumeClaim, spec.storage.size);
    }
    // Decided last, right before the StatefulSet's replicas are applied: it may read live state.
    const decision = await this.hibernation.decide({ key, instance, spec, credentials, ctx });
    const [statefulSet] = await Promise.all([
      this.owned.apply(
        key,
        informers.statefulSets,
        buildStatefulSet({
          instance,
          spec,
          replicas: decision.replicas,
          configDigest: digestOf(configMap.data),
          existingClaim,
        }),
      ),
      this.owned.apply(key, informers.configMaps, configMap),
      this.owned.apply(key, informers.services, buildHeadlessService(instance)),
      this.owned.apply(key, informers.services, buildClientService(instance)),
    ]);

    const restored = await this.restorer.ensure({
      instance,
      ready: (statefulSet.status?.readyReplicas ?? 0) > 0,
      credentials,
      logger: ctx.logger,
      signal: ctx.signal,
    });
    const readyReplicas = statefulSet.status?.readyReplicas ?? 0;
    const running = decision.replicas > 0 && readyReplicas > 0;
    const pod = informers.pods.get({ namespace, name: names.pod });
    const systemDatabasesMissing = await firstStartNotServing({
      previousPhase: instance.status?.phase,
      ready: running,
      pod,
      credentials,
      signal: ctx.signal,
    });
    const usage = await this.usage.read({
      key,
      running,
      pod,
      credentials,
      previous: instance.status?.usage,
      logger: ctx.logger,
      signal: ctx.signal,
    });
    const statusInput: StatusInput = {
      ...this.report.basis(instance, endpoint),
      credentialsSecret: names.adminSecret,
      restore: restored?.status,
      decision,
      statefulSet: { replicas: statefulSet.status?.replicas ?? 0, readyReplicas },
      usage,
      unschedulable: unschedulableMessage(pod),
      notReadyCause: notReadyCauseOf(pod),
      startDeadline: config.startDeadline,
      systemDatabasesMissing,
    };
    const now = this.now().getTime();
    const metered = accrueUsage({
      previous: { usage: instance.status?.usage, phase: instance.status?.phase },
      spec: instance.spec,
      now,
      woke: decision.transition === 'Wake',
      phaseChanges: computePhase(statusInput) !== instance.status?.phase,
      intervalMs: config.usageMeterIntervalMs,
    });
    // The gateway's request counts move with the other metered figures, at the same bounded rate.
    const leaseRef = { namespace, name: activityLeaseName(name) };
    const requestUsage = metered
      ? foldRequestUsage({
          annotations: informers.leases.get(leaseRef)?.metadata?.annotations,
          previous: instance.status?.usage,
          now,
        })
      : undefined;
    if (requestUsage && requestUsage.malformed.length > 0)
      ctx.logger.warn('request-usage annotations that do not parse are not counted', {
        annotations: requestUsage.malformed,
      });
    const status = computeStatus({
      ...statusInput,
      metered: metered && requestUsage ? { ...metered, ...requestUsage.figures } : metered,
    });
    await this.report.save(key, instance, status);
    // Only once status holds the closed days: until then their annotations are still the record.
    if (requestUsage)
      await pruneRequestUsage(this.options.clients.coordination, leaseRef, requestUsage.prune);
    await announceTransitions({
      instance,
      decision,
      status,
      events: this.options.events,
      metrics: this.options.metrics,
      logger: ctx.logger,
    });
    this.options.metrics.setUsage(key, status.usage);
    const recheckMs =
      decision.recheckAfterMs === undefined ? undefined : decision.recheckAfterMs + IDLE_RECHECK_SLACK_MS;
    // A running instance comes back when its next measurement is due, whatever else happens.
    const measureMs = running ? Math.max(1, this.usage.dueInMs(key, status.usage)) : undefined;
    const meterMs = Math.max(1, meteringDueInMs(status.usage, now, config.usageMeterIntervalMs));
    const nextMs = Math.min(
      recheckMs ?? Infinity,
      measureMs ?? Infinity,
      meterMs,
      restored?.recheckAfterMs ?? Infinity,
      systemDatabasesMissing === undefined ? Infinity : SYSTEM_DATABASES_RECHECK_MS,
    );
    return nextMs === Infinity ? DONE : requeueAfter(nextMs);
  }

  private async growVolume(
    key: ObjectKey,
    instance: CouchInstance,
    claimName: string,
    size: string,
  ): Promise<void> {
    const outcome = await this.volumes.ensure({
      key,
      namespace: instance.metadata.namespace ?? '',
      claimName,
      size,
    });
    await announceVolumeGrowth({ instance, claimName, size, outcome, events: this.options.events });
  }

  private instanceLimitExcess(instance: CouchInstance): string | undefined {
    const { informers, config } = this.options;
    const namespace = instance.metadata.namespace ?? '';
    return findInstanceLimitExcess({
      instance,
      namespaceInstances: informers.instances.list(namespace),
      isProvisioned: (name) =>
        informers.statefulSets.get({ namespace, name: couchInstanceNames(name).statefulSet }) !== undefined,
      limit: config.freeInstancesPerNamespace,
    });
  }

  private forget(key: ObjectKey): void {
    this.recent.forget(key);
    this.volumes.forget(key);
    this.hibernation.forget(key);
    this.usage.forget(key);
    this.options.metrics.forget(key);
  }
}
