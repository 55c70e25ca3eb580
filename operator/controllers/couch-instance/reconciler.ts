import type {
  V1ConfigMap,
  V1Lease,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { CouchInstanceEventReason } from '../../../api/conditions.js';
import { ANNOTATION_WAKE_REQUESTED, activityLeaseName, renderEndpoint } from '../../../api/contract.js';
import { DEFAULT_IDLE_AFTER } from '../../../api/couch-instance-schema.js';
import {
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
  type CouchInstanceStatus,
} from '../../../api/couch-instance.js';
import { unschedulableMessage } from '../../../api/pod-scheduling.js';
import { compareQuantities } from '../../../api/quantity.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import type { KubeClients } from '../../../kube/clients.js';
import { callKube, isConflict } from '../../../kube/errors.js';
import type { EventRecord, EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { patchStatusIfChanged } from '../../../kube/status-patch.js';
import { errorMessage } from '../../../observability/logger.js';
import { parseObjectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../kube/controller-runtime/reconciler.js';
import { adminHashSchemeFor } from '../../resources/couch-instance/admin-password-hash.js';
import type { InstanceCredentials } from '../../resources/couch-instance/admin-secret.js';
import { digestOf } from '../../resources/applied-digest.js';
import { buildCouchDbConfigMap, serverUuidOf } from '../../resources/couch-instance/couchdb-config.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';
import { resolveSpec, type ResolvedCouchInstanceSpec } from '../../resources/couch-instance/resolved-spec.js';
import { buildClientService, buildHeadlessService } from '../../resources/couch-instance/services.js';
import { buildStatefulSet, claimShapeOf } from '../../resources/couch-instance/statefulset.js';
import { AdminHashCache } from './admin-hash-cache.js';
import type { CouchInstanceConfig } from './config.js';
import {
  decideHibernation,
  readySinceOf,
  type HibernationDecision,
  type HibernationInput,
} from './hibernation.js';
import type { CouchInstanceMetrics } from './metrics.js';
import { OwnedObjects } from './owned-objects.js';
import { backupConditionFor } from './backup-condition.js';
import { deriveBackupSchedule } from './backup-schedule-since.js';
import type { BackupConfig } from '../couch-backup/config.js';
import { FinalBackup } from './final-backup.js';
import { RestoreFromBackup } from './restore-from-backup.js';
import { ReplicationActivity } from './replication-activity.js';
import { UsageMeter } from './usage-meter.js';
import { accrueUsage, meteringDueInMs } from './metering.js';
import { foldRequestUsage } from './request-usage.js';
import { findInstanceLimitExcess } from './instance-limit.js';
import { pruneRequestUsage } from './prune-request-usage.js';
import { computePhase, computeStatus, newlyUnschedulable, type StatusInput } from './status.js';
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
  now?: () => Date;
}

/**
 * Informer caches hold the API server's JSON, where timestamps are strings, although client-node's
 * types say Date; objects returned by typed calls do hold Dates. Either becomes RFC 3339 here.
 */
function timestampOf(value: Date | string | undefined): string | undefined {
  return value instanceof Date ? value.toISOString() : value;
}

/** The API's MicroTime strings and the typed client's Dates, compared at millisecond precision. */
function isLater(time: string | undefined, than: string | undefined): boolean {
  if (time === undefined) return false;
  return than === undefined || Date.parse(time) > Date.parse(than);
}

const isIdleTimeout = (decision: HibernationDecision): boolean =>
  decision.transition === 'Hibernate' && decision.reason === 'IdleTimeout';

/** While the final backup runs, look again this often (its completion also reconciles the instance). */
const FINAL_BACKUP_RECHECK_MS = 5_000;
/** The idle check lands just after idleAfter has passed, not just before it. */
const IDLE_RECHECK_SLACK_MS = 50;
const INSTANCE_SLOT = 'CouchInstance';
/** An instance waiting for room in its namespace looks again this often (a delete elsewhere makes room). */
const INSTANCE_LIMIT_RECHECK_MS = 15_000;

/**
 * Reconciles one CouchInstance: validate the spec, ensure the admin Secret, decide hibernation,
 * apply the ConfigMap, Services and StatefulSet, write status, and record an Event for each
 * transition. Level-triggered: every pass starts from the caches, never from the event that woke it.
 */
export class CouchInstanceReconciler implements Reconciler {
  private readonly recent = new RecentWrites();
  private readonly owned: OwnedObjects;
  private readonly hashes = new AdminHashCache();
  private readonly volumes: VolumeGrowth;
  private readonly replications: ReplicationActivity;
  private readonly usage: UsageMeter;
  private readonly finalBackup: FinalBackup;
  private readonly restorer: RestoreFromBackup;
  private readonly now: () => Date;

  constructor(private readonly options: CouchInstanceReconcilerOptions) {
    this.owned = new OwnedObjects(options.clients, this.recent);
    this.volumes = new VolumeGrowth(options.clients.core);
    this.now = options.now ?? (() => new Date());
    this.replications = new ReplicationActivity({
      timeoutMs: options.config.replicationCheckTimeoutMs,
      metrics: options.metrics,
      now: this.now,
    });
    this.usage = new UsageMeter({
      intervalMs: options.config.usageMeasureIntervalMs,
      timeoutMs: options.config.usageMeasureTimeoutMs,
      now: this.now,
    });
    this.finalBackup = new FinalBackup({
      backups: options.informers.backups,
      clients: options.clients,
      requestTimeoutMs: options.backups.requestTimeoutMs,
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
      await this.reportInvalidSpec(key, instance, endpoint, violations);
      return DONE;
    }
    const overLimit = this.instanceLimitExcess(instance);
    if (overLimit !== undefined) {
      await this.reportInstanceLimit(key, instance, endpoint, overLimit);
      return requeueAfter(INSTANCE_LIMIT_RECHECK_MS);
    }
    try {
      return await this.converge(key, instance, endpoint, ctx);
    } catch (err) {
      if (!isConflict(err) && !ctx.signal.aborted)
        await this.reportFailure(key, instance, endpoint, err, ctx);
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

    const { credentials, created } = await this.owned.ensureCredentials({
      owner: key,
      informer: informers.secrets,
      instance,
      secretName: names.adminSecret,
      endpoint,
    });
    if (created) {
      ctx.logger.info('admin credentials generated', { secret: names.adminSecret });
      await this.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.CredentialsCreated,
        message: `generated admin credentials in Secret ${names.adminSecret}`,
      });
    }

    const hashScheme = adminHashSchemeFor(spec.version);
    const configMap = buildCouchDbConfigMap(instance, {
      serverUuid: serverUuidOf(instance),
      adminUsername: credentials.username,
      adminPasswordHash: await this.hashes.hashFor(key, {
        password: credentials.password,
        instanceUid: instance.metadata.uid ?? '',
        scheme: hashScheme,
      }),
      hashScheme,
      vendorName: config.vendorName,
    });
    const existingStatefulSet = this.owned.current(key, informers.statefulSets, namespace, names.statefulSet);
    const existingClaim = claimShapeOf(existingStatefulSet);
    if (existingClaim && compareQuantities(spec.storage.size, existingClaim.size) > 0) {
      await this.growVolume(key, instance, names.dataVolumeClaim, spec.storage.size);
    }
    // Decided last, right before the StatefulSet's replicas are applied: it may read live state.
    const decision = await this.hibernationDecisionFor({ key, instance, spec, credentials, ctx });
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
      ...this.statusBasis(instance, endpoint),
      credentialsSecret: names.adminSecret,
      restore: restored?.status,
      decision,
      statefulSet: { replicas: statefulSet.status?.replicas ?? 0, readyReplicas },
      usage,
      unschedulable: unschedulableMessage(pod),
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
    await this.saveStatus(key, instance, status);
    // Only once status holds the closed days: until then their annotations are still the record.
    if (requestUsage)
      await pruneRequestUsage(this.options.clients.coordination, leaseRef, requestUsage.prune);
    await this.announceTransitions(instance, decision, status, ctx);
    this.options.metrics.setPhase(key, status.phase ?? 'Pending');
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
    );
    return nextMs === Infinity ? DONE : requeueAfter(nextMs);
  }

  /**
   * The pure decision, and when it would hibernate an idle instance, the instance's own answer
   * first (replications its replicator runs never pass the gateway, so no Lease tells of them),
   * then the activity Lease as the API server has it at that moment.
   */
  private async hibernationDecisionFor(options: {
    key: ObjectKey;
    instance: CouchInstance;
    spec: ResolvedCouchInstanceSpec;
    credentials: InstanceCredentials;
    ctx: ReconcileContext;
  }): Promise<HibernationDecision> {
    const { key, instance, spec, credentials, ctx } = options;
    const { informers } = this.options;
    const namespace = instance.metadata.namespace ?? '';
    const name = instance.metadata.name ?? '';
    const lease = informers.leases.get({ namespace, name: activityLeaseName(name) });
    const statefulSet = informers.statefulSets.get({ namespace, name: couchInstanceNames(name).statefulSet });
    const now = this.now().getTime();
    const input: HibernationInput = {
      now,
      keepAlive: spec.keepAlive,
      idleAfterMs: spec.idleAfterMs,
      createdAt: timestampOf(instance.metadata.creationTimestamp),
      activityRenewedAt: timestampOf(lease?.spec?.renewTime),
      wakeRequestedAt: instance.metadata.annotations?.[ANNOTATION_WAKE_REQUESTED],
      replicationsRunningAt: this.replications.lastSeenRunning(key),
      readySince: readySinceOf({
        readyReplicas: statefulSet?.status?.readyReplicas ?? 0,
        previousConditions: instance.status?.conditions,
        now,
      }),
      previous: instance.status ?? {},
    };
    const decision = decideHibernation(input);
    if (!isIdleTimeout(decision)) return decision;
    const runningAt = await this.replications.check({
      key,
      pod: informers.pods.get({ namespace, name: couchInstanceNames(name).pod }),
      credentials,
      logger: ctx.logger,
      signal: ctx.signal,
    });
    if (runningAt !== undefined)
      return decideHibernation({ ...input, now: runningAt, replicationsRunningAt: runningAt });
    // Scaling to zero is the one step that hurts when wrong, and the cached Lease is from before
    // the replication check, which may have taken seconds: a request that came meanwhile renewed
    // the Lease and is being forwarded to this pod. Decide again on the Lease as it is now.
    const liveLease = await this.readActivityLease(namespace, name);
    const renewedAt = timestampOf(liveLease?.spec?.renewTime);
    if (!isLater(renewedAt, input.activityRenewedAt)) {
      const gate = await this.finalBackup.gate({
        instance,
        pod: informers.pods.get({ namespace, name: couchInstanceNames(name).pod }),
        credentials,
        lastActivityTime: decision.lastActivityTime,
        logger: ctx.logger,
        signal: ctx.signal,
      });
      if (!gate.hold) return decision;
      return {
        replicas: 1,
        reason: 'FinalBackup',
        recheckAfterMs: FINAL_BACKUP_RECHECK_MS,
        ...(instance.status?.lastActivityTime ? { lastActivityTime: instance.status.lastActivityTime } : {}),
      };
    }
    ctx.logger.debug('activity Lease renewed during the idle check', { renewedAt });
    return decideHibernation({ ...input, now: this.now().getTime(), activityRenewedAt: renewedAt });
  }

  /**
   * One read from the API server, not the cache: see hibernationDecisionFor. A list by name rather
   * than a get, because list (and watch) is what the operator may do with the gateway's Leases.
   */
  private async readActivityLease(namespace: string, instance: string): Promise<V1Lease | undefined> {
    const leases = await callKube(() =>
      this.options.clients.coordination.listNamespacedLease({
        namespace,
        fieldSelector: `metadata.name=${activityLeaseName(instance)}`,
      }),
    );
    return leases.items[0];
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
    if (outcome.result === 'requested') {
      await this.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.VolumeExpansionRequested,
        message: `growing PersistentVolumeClaim ${claimName} from ${outcome.from} to ${outcome.to}`,
      });
    } else if (outcome.result === 'refused') {
      await this.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.VolumeExpansionRefused,
        message: `PersistentVolumeClaim ${claimName} cannot grow to ${size}: ${outcome.message}`,
      });
    }
  }

  private async announceTransitions(
    instance: CouchInstance,
    decision: HibernationDecision,
    status: CouchInstanceStatus,
    ctx: ReconcileContext,
  ): Promise<void> {
    const { metrics } = this.options;
    if (decision.transition === 'Hibernate') {
      metrics.countHibernation();
      ctx.logger.info('hibernated', { lastActivityTime: decision.lastActivityTime });
      await this.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.Hibernated,
        message: `no activity since ${decision.lastActivityTime ?? 'creation'}: scaled to zero, data kept`,
      });
    } else if (decision.transition === 'Wake') {
      metrics.countWake();
      ctx.logger.info('woken', { reason: decision.reason });
      await this.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.Woken,
        message:
          decision.reason === 'KeepAlive' ? 'keepAlive turned on: scaling up' : 'wake requested: scaling up',
      });
    }
    const cannotSchedule = newlyUnschedulable(instance.status, status);
    if (cannotSchedule !== undefined) {
      await this.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.Unschedulable,
        message: cannotSchedule,
      });
    }
    if (status.phase === 'Running' && instance.status?.phase !== 'Running') {
      await this.record(instance, {
        type: 'Normal',
        reason: CouchInstanceEventReason.Started,
        message: 'CouchDB is ready',
      });
    }
  }

  private async reportInvalidSpec(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    violations: string[],
  ): Promise<void> {
    const status = computeStatus({ ...this.statusBasis(instance, endpoint), specViolations: violations });
    const before = instance.status?.conditions?.find((c) => c.type === 'Degraded')?.message;
    if (instance.status?.phase !== 'Failed' || before !== violations.join('; ')) {
      await this.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.InvalidSpec,
        message: violations.join('; '),
      });
    }
    await this.saveStatus(key, instance, status);
    this.options.metrics.setPhase(key, 'Failed');
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

  /** Nothing is created for it; an Event when it first waits, status says why until there is room. */
  private async reportInstanceLimit(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    message: string,
  ): Promise<void> {
    const degraded = instance.status?.conditions?.find((c) => c.type === 'Degraded');
    if (degraded?.reason !== CouchInstanceEventReason.InstanceLimitExceeded)
      await this.record(instance, {
        type: 'Warning',
        reason: CouchInstanceEventReason.InstanceLimitExceeded,
        message,
      });
    const status = computeStatus({ ...this.statusBasis(instance, endpoint), instanceLimit: message });
    await this.saveStatus(key, instance, status);
    this.options.metrics.setPhase(key, 'Pending');
  }

  /** Best effort: Degraded says why the reconcile failed; the loop retries with backoff regardless. */
  private async reportFailure(
    key: ObjectKey,
    instance: CouchInstance,
    endpoint: string,
    err: unknown,
    ctx: ReconcileContext,
  ): Promise<void> {
    const message = errorMessage(err);
    try {
      const status = computeStatus({ ...this.statusBasis(instance, endpoint), reconcileError: message });
      await this.saveStatus(key, instance, status);
    } catch (statusErr) {
      ctx.logger.warn('could not write the failure to status', { error: errorMessage(statusErr) });
    }
    await this.record(instance, {
      type: 'Warning',
      reason: CouchInstanceEventReason.ReconcileFailed,
      message,
    });
  }

  private statusBasis(instance: CouchInstance, endpoint: string): StatusInput {
    return {
      backedUp: backupConditionFor({
        instance,
        backups: this.options.informers.backups.list(instance.metadata.namespace),
        now: this.now(),
      }),
      backupSchedule: deriveBackupSchedule({
        spec: instance.spec,
        previous: instance.status?.backupSchedule,
        now: this.now().toISOString(),
      }),
      previous: instance.status,
      generation: instance.metadata.generation,
      now: this.now().toISOString(),
      endpoint,
      credentialsSecret: instance.status?.credentialsSecret,
      specViolations: [],
      idleAfter: instance.spec.hibernation?.idleAfter ?? DEFAULT_IDLE_AFTER,
    };
  }

  private async saveStatus(
    key: ObjectKey,
    instance: CouchInstance,
    status: CouchInstanceStatus,
  ): Promise<void> {
    const written = await patchStatusIfChanged({
      customObjects: this.options.clients.customObjects,
      plural: COUCH_INSTANCE_PLURAL,
      object: instance,
      status,
    });
    if (written) this.recent.remember(key, INSTANCE_SLOT, instance, written);
  }

  private record(instance: CouchInstance, event: EventRecord): Promise<void> {
    return this.options.events.record(instance, event);
  }

  private forget(key: ObjectKey): void {
    this.recent.forget(key);
    this.hashes.forget(key);
    this.volumes.forget(key);
    this.replications.forget(key);
    this.usage.forget(key);
    this.options.metrics.forget(key);
  }
}
