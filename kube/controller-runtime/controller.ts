import type { KubernetesObject } from '../kubernetes-object.js';
import type { Logger } from 'winston';
import type { Informer } from '../informer.js';
import { isConflict } from '../errors.js';
import { errorMessage } from '../../observability/logger.js';
import type { ControllerMetrics, ReconcileOutcome } from '../../observability/metrics.js';
import type { BackoffPolicy } from './backoff.js';
import { objectKeyOf, type ObjectKey } from './object-key.js';
import { buildDefaultRateLimiter, ItemExponentialRateLimiter, type RateLimiter } from './rate-limiter.js';
import type { Reconciler } from './reconciler.js';
import { WorkQueue } from './work-queue.js';

/**
 * One source of keys: changes to the informer's objects become keys through `toKeys`.
 * Declared with method syntax so a WatchSource<V1StatefulSet> fits a list of WatchSource.
 */
export interface WatchSource<T extends KubernetesObject = KubernetesObject> {
  informer: Informer<T>;
  toKeys(object: T): readonly ObjectKey[];
  /** Filters updates only (adds and deletes always enqueue); default: every update. */
  updatePredicate?(previous: T | undefined, current: T): boolean;
  /**
   * Whether an added or updated object is the version the controller's own last write of it
   * produced: the reconcile that wrote it went on with the write's answer, so its watch event
   * wakes nothing. Without it each object a reconcile creates or changes costs its owner one more
   * reconcile that finds nothing to do. Deletes always enqueue. A promise: not known yet (the write
   * is still waiting for its answer); the event's keys are queued once it resolves false. It must
   * never reject.
   */
  isOwnWrite?(object: T): boolean | Promise<boolean>;
}

/** What a controller module provides; the loop adds queueing, workers, retries and resync. */
export interface ControllerDefinition {
  reconciler: Reconciler;
  /** The kind the reconciler owns: every cached object's key is reconciled on start and each resync. */
  primary: Informer<KubernetesObject>;
  /** Include `primary` itself here, usually with `toKeys: ownKey` and `isSpecOrMetadataChange`. */
  watches: readonly WatchSource[];
  /** Concurrent reconciles, where this controller needs other than the operator's default. */
  workers?: number;
}

export interface ControllerOptions extends ControllerDefinition {
  name: string;
  workers: number;
  /** Every key of `primary` is enqueued this often, to catch anything a watch missed; 0 = never. */
  resyncPeriodMs: number;
  /** Per-key backoff after a failed reconcile. */
  backoff: BackoffPolicy;
  /** Per-key backoff after a 409 Conflict: short, since the retry re-reads and usually succeeds at once. */
  conflictBackoff?: BackoffPolicy;
  logger: Logger;
  metrics?: ControllerMetrics;
  /** Overrides the default limiter (per-key exponential + overall token bucket); for tests. */
  rateLimiter?: RateLimiter;
}

export const DEFAULT_CONFLICT_BACKOFF: BackoffPolicy = Object.freeze({ baseMs: 10, maxMs: 1_000 });

/**
 * The loop that turns watch events into reconciles: a deduplicating work queue of namespace/name
 * keys, `workers` concurrent reconciles but never two of one key, exponential per-key backoff on
 * errors, quick retries on 409 conflicts, requeue-after results and a periodic resync.
 *
 * Watches are subscribed at construction; events that arrive while the controller is not running
 * (before start, or on a standby replica) are dropped, because start() enqueues every key anyway.
 * start()/stop() may alternate as leadership comes and goes.
 *
 * Usage (a controller module, registered in operator/registered-controllers.ts):
 *
 *   export const couchInstanceController: ControllerRegistration = {
 *     name: 'couch-instance',
 *     create({ informers, clients, events, config, logger }) {
 *       const instances = informers.informerFor<CouchInstance>(COUCH_INSTANCE_RESOURCE);
 *       const statefulSets = informers.informerFor<V1StatefulSet>({
 *         apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets', labelSelector: LABEL_INSTANCE,
 *       });
 *       return {
 *         reconciler: new CouchInstanceReconciler({ instances, statefulSets, clients, events, config }),
 *         primary: instances,
 *         watches: [
 *           { informer: instances, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
 *           { informer: statefulSets, toKeys: ownerKeys({ apiVersion: SETTEE_API_VERSION, kind: 'CouchInstance' }) },
 *         ],
 *       };
 *     },
 *   };
 *
 *   // the reconciler: re-read state from the caches by key, act, return DONE or requeueAfter(ms)
 *   async reconcile(key, { logger }) {
 *     const instance = this.instances.get(parseObjectKey(key));
 *     if (!instance) return DONE; // deleted: garbage collection removes what it owned
 *     ...
 *     return requeueAfter(msUntilIdle);
 *   }
 */
export class Controller {
  readonly name: string;
  private readonly logger: Logger;
  private queue: WorkQueue | undefined;
  private abort: AbortController | undefined;
  private workers: Promise<void>[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly conflictLimiter: ItemExponentialRateLimiter;

  constructor(private readonly options: ControllerOptions) {
    this.name = options.name;
    this.logger = options.logger.child({ controller: options.name });
    this.conflictLimiter = new ItemExponentialRateLimiter(
      options.conflictBackoff ?? DEFAULT_CONFLICT_BACKOFF,
    );
    for (const source of options.watches) this.subscribe(source);
    options.metrics?.trackQueueDepth(options.name, () => this.queue?.length ?? 0);
  }

  get isRunning(): boolean {
    return this.queue !== undefined;
  }

  start(): void {
    if (this.queue) return;
    const queue = new WorkQueue(
      this.options.rateLimiter ?? buildDefaultRateLimiter({ backoff: this.options.backoff }),
    );
    const abort = new AbortController();
    this.queue = queue;
    this.abort = abort;
    this.enqueueAll();
    if (this.options.resyncPeriodMs > 0) {
      this.resyncTimer = setInterval(() => this.enqueueAll(), this.options.resyncPeriodMs);
    }
    this.workers = Array.from({ length: Math.max(1, this.options.workers) }, () =>
      this.work(queue, abort.signal),
    );
    this.logger.info('controller started', { workers: this.workers.length });
  }

  /** Stops handing out keys and waits for the reconciles in flight to finish. */
  async stop(): Promise<void> {
    const queue = this.queue;
    if (!queue) return;
    this.queue = undefined;
    clearInterval(this.resyncTimer);
    this.abort?.abort();
    await queue.shutDown();
    await Promise.all(this.workers);
    this.workers = [];
    this.logger.info('controller stopped');
  }

  private subscribe(source: WatchSource): void {
    source.informer.onEvent((event) => {
      if (!this.queue) return;
      const own = event.type === 'delete' ? false : (source.isOwnWrite?.(event.object) ?? false);
      if (own === true) return;
      if (
        event.type === 'update' &&
        source.updatePredicate &&
        !source.updatePredicate(event.previous, event.object)
      )
        return;
      const keys = source.toKeys(event.object);
      if (own === false) for (const key of keys) this.queue.add(key);
      else
        void own.then((isOwn) => {
          if (!isOwn) for (const key of keys) this.queue?.add(key);
        });
    });
  }

  private enqueueAll(): void {
    for (const object of this.options.primary.list()) {
      const key = objectKeyOf(object);
      if (key) this.queue?.add(key);
    }
  }

  private async work(queue: WorkQueue, signal: AbortSignal): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await this.reconcileOnce(queue, key, signal);
      } finally {
        queue.done(key);
      }
    }
  }

  private async reconcileOnce(queue: WorkQueue, key: ObjectKey, signal: AbortSignal): Promise<void> {
    const logger = this.logger.child({ key });
    const started = performance.now();
    const failures = queue.failures(key);
    let outcome: ReconcileOutcome;
    try {
      const result = await this.options.reconciler.reconcile(key, { logger, signal, failures });
      queue.forget(key);
      this.conflictLimiter.forget(key);
      if (result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
        queue.addAfter(key, result.requeueAfterMs);
        outcome = 'requeue';
      } else {
        outcome = 'success';
      }
    } catch (err) {
      if (signal.aborted) {
        // Stopping: the reconcile was cut short on purpose; the next leader redoes it.
        logger.debug('reconcile interrupted by stop', { error: errorMessage(err) });
        return;
      }
      if (isConflict(err)) {
        const delayMs = this.conflictLimiter.when(key);
        logger.debug('reconcile hit a conflict; retrying', { delayMs });
        queue.addAfter(key, delayMs);
        outcome = 'conflict';
      } else {
        queue.addRateLimited(key);
        logger.error('reconcile failed; retrying with backoff', {
          error: errorMessage(err),
          code: (err as { code?: unknown } | null)?.code,
          failures: failures + 1,
        });
        outcome = 'error';
      }
    }
    this.options.metrics?.observeReconcile(this.name, outcome, (performance.now() - started) / 1000);
  }
}
