import type { V1Lease, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATION_WAKE_REQUESTED, activityLeaseName } from '../../../api/contract.js';
import type { CouchBackup } from '../../../api/couch-backup.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { KubeClients } from '../../../kube/clients.js';
import { callKube } from '../../../kube/errors.js';
import type { Informer } from '../../../kube/informer.js';
import type { ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import type { ReconcileContext } from '../../../kube/controller-runtime/reconciler.js';
import type { InstanceCredentials } from '../../resources/couch-instance/admin-secret.js';
import { couchInstanceNames } from '../../resources/couch-instance/names.js';
import type { ResolvedCouchInstanceSpec } from '../../resources/couch-instance/resolved-spec.js';
import { FinalBackup } from './final-backup.js';
import {
  decideHibernation,
  readySinceOf,
  type HibernationDecision,
  type HibernationInput,
} from './hibernation.js';
import type { CouchInstanceMetrics } from './metrics.js';
import { ReplicationActivity } from './replication-activity.js';
import { startAttemptOf } from './start-deadline.js';

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

/**
 * How many replicas an instance gets: the pure decision (hibernation.ts), and before it scales an
 * idle instance to zero, the live checks that may keep it up: replications the instance runs
 * itself, the activity Lease as the API server has it at that moment, and the final backup of a
 * changed instance (final-backup.ts).
 */
export class HibernationGate {
  private readonly replications: ReplicationActivity;
  private readonly finalBackup: FinalBackup;

  constructor(
    private readonly options: {
      informers: {
        leases: Informer<V1Lease>;
        statefulSets: Informer<V1StatefulSet>;
        pods: Informer<V1Pod>;
        backups: Informer<CouchBackup>;
      };
      clients: KubeClients;
      metrics: CouchInstanceMetrics;
      replicationCheckTimeoutMs: number;
      backupRequestTimeoutMs: number;
      /** SETTEE_START_DEADLINE: how long an instance may try to start (start-deadline.ts). */
      startDeadlineMs: number;
      now: () => Date;
    },
  ) {
    this.replications = new ReplicationActivity({
      timeoutMs: options.replicationCheckTimeoutMs,
      metrics: options.metrics,
      now: options.now,
    });
    this.finalBackup = new FinalBackup({
      backups: options.informers.backups,
      clients: options.clients,
      requestTimeoutMs: options.backupRequestTimeoutMs,
      now: options.now,
    });
  }

  /**
   * The pure decision, and when it would hibernate an idle instance, the instance's own answer
   * first (replications its replicator runs never pass the gateway, so no Lease tells of them),
   * then the activity Lease as the API server has it at that moment.
   */
  async decide(options: {
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
    const now = this.options.now().getTime();
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
      startAttempt: startAttemptOf({
        conditions: instance.status?.conditions,
        generation: instance.metadata.generation,
      }),
      startDeadlineMs: this.options.startDeadlineMs,
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
    return decideHibernation({ ...input, now: this.options.now().getTime(), activityRenewedAt: renewedAt });
  }

  forget(key: ObjectKey): void {
    this.replications.forget(key);
  }

  /**
   * One read from the API server, not the cache: see decide. A list by name rather than a get,
   * because list (and watch) is what the operator may do with the gateway's Leases.
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
}
