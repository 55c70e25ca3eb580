import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { ANNOTATION_WAKE_REQUESTED, SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';
import { patchAnnotation } from '../../kube/annotation-patch.js';
import { errorMessage } from '../../observability/logger.js';
import { objectKey } from '../../kube/controller-runtime/object-key.js';
import { GATEWAY_FIELD_MANAGER } from '../field-manager.js';
import type { InstanceRef } from '../instance-ref.js';
import { decideWake } from './wake-decision.js';

/** Writes the wake-requested annotation; separate so tests can count the writes. */
export type WakeRequestWriter = (instance: InstanceRef, requestedAt: string) => Promise<void>;

export interface WakerOptions {
  write: WakeRequestWriter;
  /** The current cached object, re-read before a retry. */
  lookup: (instance: InstanceRef) => CouchInstance | undefined;
  /** Whether requests still wait for the instance; a failed write is retried only while they do. */
  isWanted: (instanceKey: string) => boolean;
  retryIntervalMs: number;
  onRequested?: (instance: InstanceRef) => void;
  logger: Logger;
  now?: () => Date;
}

/**
 * Asks the operator to wake a hibernated instance, once per hibernation episode per gateway
 * replica, however many requests arrive. Across replicas no coordination is needed: the
 * annotation is a JSON merge patch, and writing it twice wakes the instance once.
 */
export class Waker {
  /** instance key -> the episode (hibernatedAt) already asked about, or being asked about. */
  private readonly asked = new Map<string, string>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly now: () => Date;

  constructor(private readonly options: WakerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Called for every request that has to wait; writes at most once per episode. */
  ensureAwake(instance: CouchInstance): void {
    const ref = { namespace: instance.metadata.namespace ?? '', name: instance.metadata.name ?? '' };
    const key = objectKey(ref);
    const decision = decideWake(instance, this.now());
    if (decision.kind !== 'request' || this.asked.get(key) === decision.episode) return;
    this.asked.set(key, decision.episode);
    this.options.logger.info('requesting a wake', { instance: key, hibernatedAt: decision.episode });
    this.options.write(ref, decision.requestedAt).then(
      () => this.options.onRequested?.(ref),
      (err: unknown) => {
        this.options.logger.warn('could not request a wake; will retry while requests wait', {
          instance: key,
          error: errorMessage(err),
        });
        if (this.asked.get(key) === decision.episode) this.asked.delete(key);
        this.scheduleRetry(ref, key);
      },
    );
  }

  /** The instance is gone: what was asked for it, and any retry, are dropped with it. */
  forget(instanceKey: string): void {
    this.asked.delete(instanceKey);
    clearTimeout(this.retries.get(instanceKey));
    this.retries.delete(instanceKey);
  }

  stop(): void {
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  private scheduleRetry(ref: InstanceRef, key: string): void {
    if (this.retries.has(key)) return;
    const timer = setTimeout(() => {
      this.retries.delete(key);
      const instance = this.options.lookup(ref);
      if (instance && this.options.isWanted(key)) this.ensureAwake(instance);
    }, this.options.retryIntervalMs);
    timer.unref();
    this.retries.set(key, timer);
  }
}

/** The production writer: a JSON merge patch of one annotation on the CouchInstance. */
export function wakeRequestWriter(customObjects: CustomObjectsApi): WakeRequestWriter {
  return async (instance, requestedAt) => {
    await patchAnnotation(customObjects, {
      object: {
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: COUCH_INSTANCE_PLURAL,
        namespace: instance.namespace,
        name: instance.name,
      },
      annotation: ANNOTATION_WAKE_REQUESTED,
      value: requestedAt,
      fieldManager: GATEWAY_FIELD_MANAGER,
    });
  };
}
