import type { V1Secret } from '@kubernetes/client-node';
import type { Condition } from '../../../api/conditions.js';
import {
  ANNOTATION_ROTATE_SIGNING_KEYS,
  QUEUE_BINDING_PLURAL,
  QueueBindingConditionType,
  QueueBindingEventReason,
  QueueBindingReason,
  QueueEnvKey,
  queueEnvSecretName,
  renderQueueUrl,
  type QueueBinding,
  type QueueBindingStatus,
} from '../../../api/queue-binding.js';
import { resolveQueueLimits } from '../../../api/queue-limits.js';
import { applyObject } from '../../../kube/apply.js';
import type { KubeClients } from '../../../kube/clients.js';
import type { EventRecord, EventRecorder } from '../../../kube/events.js';
import type { Informer } from '../../../kube/informer.js';
import { patchStatusIfChanged } from '../../../kube/status-patch.js';
import { parseObjectKey, type ObjectKey } from '../../../kube/controller-runtime/object-key.js';
import { RecentWrites } from '../../../kube/controller-runtime/recent-writes.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../../kube/controller-runtime/reconciler.js';
import { buildQueueEnvSecret, isEnvSecretUpToDate } from '../../resources/queue-binding/env-secret.js';
import { deriveSigningKey } from '../../resources/queue-binding/signing-keys.js';
import type { QueueBindingConfig } from './config.js';
import { checkDatabase, type DatabaseCheck } from './database-check.js';
import { readDatabasePassword } from './password.js';
import { decideSigningKeys, type SigningKeyDecision, type SigningKeyPair } from './signing-key-rotation.js';
import { computeQueueBindingStatus } from './status.js';

export interface QueueBindingInformers {
  bindings: Informer<QueueBinding>;
  /** The env Secrets the operator writes (selected by label). */
  envSecrets: Informer<V1Secret>;
}

export interface QueueBindingReconcilerOptions {
  informers: QueueBindingInformers;
  clients: KubeClients;
  events: EventRecorder;
  config: QueueBindingConfig;
  now?: () => Date;
}

const BINDING_SLOT = 'QueueBinding';
const ENV_SECRET_SLOT = 'Secret';

function conditionOf(status: QueueBindingStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Reconciles one QueueBinding: read the database password, decide the signing keys (rotation),
 * write the env Secret with the four VQUEUE_* values, check that the database answers, and write
 * status with Ready, DatabaseReachable and the effective limits (which the gateway enforces). It comes back every check interval (and when a rotation
 * left pending by an older operator is due) because the password lives in the tenant's Secret,
 * which is not watched.
 * Its own writes (status, env Secret) are read back through RecentWrites: the env Secret write
 * re-queues the key at once, and a pass on the stale cache would start a rotation again.
 */
export class QueueBindingReconciler implements Reconciler {
  private readonly recent = new RecentWrites();
  private readonly now: () => Date;

  constructor(private readonly options: QueueBindingReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const { informers, clients, config } = this.options;
    const binding = this.recent.read(key, BINDING_SLOT, informers.bindings.get(parseObjectKey(key)));
    // Gone or going: garbage collection removes the env Secret through its owner reference.
    if (!binding || binding.metadata.deletionTimestamp) {
      this.recent.forget(key);
      return DONE;
    }
    const now = this.now();
    const namespace = binding.metadata.namespace ?? '';
    const name = binding.metadata.name ?? '';
    const queueUrl = renderQueueUrl(config.queueBaseUrl, { namespace, name });

    const lookup = await readDatabasePassword(clients.core, binding);
    const password = 'password' in lookup ? lookup.password : undefined;
    const keys = config.masterSecret
      ? decideSigningKeys({
          previous: binding.status?.signingKeys,
          requested: binding.metadata.annotations?.[ANNOTATION_ROTATE_SIGNING_KEYS],
          now,
        })
      : undefined;

    let envSecret: string | undefined;
    if (keys && password !== undefined) {
      envSecret = await this.ensureEnvSecret(
        key,
        binding,
        { queueUrl, password, keys: keys.state, masterSecret: config.masterSecret! },
        ctx,
      );
    }
    const database =
      password !== undefined
        ? await checkDatabase(binding.spec.connection, password, config.databaseTimeoutMs)
        : undefined;

    const status = computeQueueBindingStatus(
      binding.status,
      {
        generation: binding.metadata.generation,
        queueUrl,
        envSecret,
        signingKeys: keys?.state,
        limits: resolveQueueLimits(binding.spec.limits, config.limitDefaults, binding.spec.plan),
        passwordProblem: 'problem' in lookup ? lookup.problem : undefined,
        database,
        declaredEngine: binding.spec.engine,
      },
      now.toISOString(),
    );
    const written = await patchStatusIfChanged({
      customObjects: clients.customObjects,
      plural: QUEUE_BINDING_PLURAL,
      object: binding,
      status,
    });
    if (written) this.recent.remember(key, BINDING_SLOT, binding, written);
    await this.recordTransitions(binding, status, { keys, database, signingMissing: !config.masterSecret });
    if (database && !database.reachable)
      ctx.logger.info('queue database not usable', { reason: database.reason });

    const nextCheck =
      keys?.rotateInMs !== undefined
        ? Math.min(config.checkIntervalMs, Math.max(0, keys.rotateInMs) + 1)
        : config.checkIntervalMs;
    return requeueAfter(nextCheck);
  }

  /** Applies the env Secret when its content differs from the cached one; returns its name. */
  private async ensureEnvSecret(
    key: ObjectKey,
    binding: QueueBinding,
    input: { queueUrl: string; password: string; keys: SigningKeyPair; masterSecret: string },
    ctx: ReconcileContext,
  ): Promise<string> {
    const uid = binding.metadata.uid ?? '';
    const derive = (generation: number): string =>
      deriveSigningKey({ masterSecret: input.masterSecret, bindingUid: uid, generation });
    const desired = buildQueueEnvSecret(binding, {
      [QueueEnvKey.Url]: input.queueUrl,
      [QueueEnvKey.Token]: input.password,
      [QueueEnvKey.CurrentSigningKey]: derive(input.keys.currentGeneration),
      [QueueEnvKey.NextSigningKey]: derive(input.keys.nextGeneration),
    });
    const name = queueEnvSecretName(binding.metadata.name ?? '');
    const cached = this.recent.read(
      key,
      ENV_SECRET_SLOT,
      this.options.informers.envSecrets.get({ namespace: binding.metadata.namespace, name }),
    );
    if (isEnvSecretUpToDate(cached, desired)) return name;
    const applied = await applyObject(this.options.clients.objects, desired);
    this.recent.remember(key, ENV_SECRET_SLOT, cached, applied);
    ctx.logger.info('env Secret written', { secret: name });
    if (!cached) {
      await this.event(binding, {
        type: 'Normal',
        reason: QueueBindingEventReason.EnvSecretCreated,
        message: `Secret ${name} holds the VQUEUE_* values`,
      });
    }
    return name;
  }

  private async recordTransitions(
    binding: QueueBinding,
    status: QueueBindingStatus,
    observed: {
      keys: SigningKeyDecision | undefined;
      database: DatabaseCheck | undefined;
      signingMissing: boolean;
    },
  ): Promise<void> {
    const { keys, database } = observed;
    if (keys?.transition === 'rotated') {
      const { currentGeneration, nextGeneration } = keys.state;
      await this.event(binding, {
        type: 'Normal',
        reason: QueueBindingEventReason.SigningKeyRotated,
        message: `deliveries are now signed with signing key generation ${currentGeneration} (the previous VQUEUE_NEXT_SIGNING_KEY); VQUEUE_NEXT_SIGNING_KEY is generation ${nextGeneration}`,
      });
    }
    if (keys?.transition === 'next-published') {
      await this.event(binding, {
        type: 'Normal',
        reason: QueueBindingEventReason.NextSigningKeyPublished,
        message: `VQUEUE_NEXT_SIGNING_KEY now holds signing key generation ${keys.state.nextGeneration}; deliveries are still signed with generation ${keys.state.currentGeneration}`,
      });
    }
    // Like the database's, recorded on the transition only, not on every periodic check.
    const wasSigningMissing =
      conditionOf(binding.status, QueueBindingConditionType.Ready)?.reason ===
      QueueBindingReason.SigningSecretMissing;
    if (observed.signingMissing && !wasSigningMissing) {
      await this.event(binding, {
        type: 'Warning',
        reason: QueueBindingEventReason.SigningSecretMissing,
        message: 'the operator has no signing master secret; set SETTEE_SIGNING_MASTER_SECRET',
      });
    }
    const wasReachable = conditionOf(binding.status, QueueBindingConditionType.DatabaseReachable)?.status;
    const isReachable = conditionOf(status, QueueBindingConditionType.DatabaseReachable)?.status;
    if (database && wasReachable !== isReachable) {
      await this.event(
        binding,
        database.reachable
          ? {
              type: 'Normal',
              reason: QueueBindingEventReason.DatabaseReachable,
              message: `the database answers (${database.server.engine} ${database.server.version})`,
            }
          : {
              type: 'Warning',
              reason: QueueBindingEventReason.DatabaseUnreachable,
              message: database.message,
            },
      );
    }
  }

  private event(binding: QueueBinding, record: EventRecord): Promise<void> {
    return this.options.events.record(binding, record);
  }
}
