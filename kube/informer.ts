import {
  ListWatch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { errorMessage } from '../observability/logger.js';
import { exponentialBackoffMs, jitteredMs, type BackoffPolicy } from './controller-runtime/backoff.js';
import { objectKeyOf, type ObjectRef } from './controller-runtime/object-key.js';
import { toKubeApiError } from './errors.js';
import { listObjects } from './list-objects.js';
import { trimKey, trimObject, type ObjectTrim, type ObjectTrims } from './object-trim.js';
import { resourceCollectionPath, type WatchedResource } from './resource-path.js';
import { DEFAULT_WATCH_TIMEOUT, TimedWatch, type WatchTimeoutPolicy } from './watch.js';

export type InformerEvent<T> =
  | { type: 'add'; object: T }
  /** `previous` is the object this informer saw before; undefined only if it never saw one. */
  | { type: 'update'; object: T; previous: T | undefined }
  | { type: 'delete'; object: T };

export type InformerEventHandler<T> = (event: InformerEvent<T>) => void;

/**
 * A cache of one kind of object kept current by list+watch, that keeps itself running: when the
 * watch stops on an error it is restarted with exponential backoff, forever, until `stop()`. Each
 * watch ends after a jittered few minutes and is resumed from where it was (watch.ts), so a
 * connection that died silently freezes the cache for that long at most.
 */
export interface Informer<T extends KubernetesObject> {
  readonly resource: WatchedResource;
  /**
   * Resolves once a list has succeeded and its objects are in the cache (client-node's own
   * start() resolves even when the list failed). Rejects only if stopped before that.
   */
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  get(ref: ObjectRef): T | undefined;
  list(namespace?: string): readonly T[];
  /**
   * Drops from `object`, in place, what this cache drops from the objects it holds (object-trim.ts),
   * so that a copy kept beside the cache (an own write's answer) has the cache's shape.
   */
  trim(object: T): void;
  /** Handlers added before start() see an `add` for every object of the first list. Returns an unsubscribe. */
  onEvent(handler: InformerEventHandler<T>): () => void;
  start(): void;
  stop(): Promise<void>;
}

export class InformerStoppedError extends Error {
  readonly code = 'INFORMER_STOPPED';
  constructor(path: string) {
    super(`informer for ${path} stopped before its first list`);
    this.name = 'InformerStoppedError';
  }
}

export interface InformerOptions {
  kubeConfig: KubeConfig;
  resource: WatchedResource;
  logger: Logger;
  restartBackoff: BackoffPolicy;
  /** Called on each restart after an error, e.g. to count it in a metric. */
  onRestart?: () => void;
  /** How long each watch request lives (DEFAULT_WATCH_TIMEOUT); tests shorten it. */
  watchTimeout?: WatchTimeoutPolicy;
  /** Per-kind trims of what the cache keeps, besides the metadata every cache drops (object-trim.ts). */
  trims?: ObjectTrims | undefined;
}

/**
 * Capped at 5 s, not client-go's 30 s: once the API server is back after an outage, an informer
 * sees changes again by its next attempt, and a cache blind for up to 30 s would make every
 * recovery (a wake, a binding, a failover) wait that long; the retries it costs a down API server
 * (one every 2.5-5 s per informer, spread by the jitter) are cheap.
 */
export const DEFAULT_INFORMER_RESTART_BACKOFF: BackoffPolicy = Object.freeze({ baseMs: 200, maxMs: 5_000 });

/** Each restart delay is shortened by a random share of up to this much (jitteredMs). */
const RESTART_JITTER = 0.5;

/**
 * How long a watch answered 200 must stay open before the back-off starts from its base again
 * (client-go too resets only after a healthy stretch). Not at a list's success or a watch's 200
 * alone: a watch answered 200 and cut at once (a proxy, a booting API server), or refused after a
 * relist, would have every restart retry within 200 ms, forever.
 */
const HEALTHY_WATCH_MS = 3_000;

/** client-node's ListWatch, restarted on error, with a real synced signal and old objects on update. */
export class ResilientInformer<T extends KubernetesObject> implements Informer<T> {
  readonly resource: WatchedResource;
  readonly synced: Promise<void>;
  private readonly listWatch: ListWatch<T>;
  private readonly handlers = new Set<InformerEventHandler<T>>();
  /** The object last dispatched per key, to hand updates their `previous`; the same references the cache holds. */
  private readonly lastSeen = new Map<string, T>();
  private readonly logger: Logger;
  private readonly path: string;
  private readonly kindTrim: ObjectTrim | undefined;
  private resolveSynced!: () => void;
  private rejectSynced!: (err: Error) => void;
  private isSynced = false;
  private started = false;
  private stopped = false;
  private consecutiveFailures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private healthyTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: InformerOptions) {
    this.resource = options.resource;
    this.path = resourceCollectionPath(options.resource);
    this.kindTrim = options.trims?.get(trimKey(options.resource));
    this.logger = options.logger.child({
      informer: this.path,
      labelSelector: options.resource.labelSelector,
    });
    this.synced = new Promise<void>((resolve, reject) => {
      this.resolveSynced = resolve;
      this.rejectSynced = reject;
    });
    // Awaiting synced is optional; an unobserved rejection at shutdown must not crash the process.
    this.synced.catch(() => undefined);
    this.listWatch = new ListWatch<T>(
      this.path,
      new TimedWatch(options.kubeConfig, options.watchTimeout ?? DEFAULT_WATCH_TIMEOUT, Math.random, () =>
        this.onWatchAnswered(),
      ),
      () => this.listIntoCache(),
      false,
      options.resource.labelSelector,
      options.resource.fieldSelector,
    );
    this.listWatch.on('add', (object) => this.dispatch(object, 'add'));
    this.listWatch.on('update', (object) => this.dispatch(object, 'update'));
    this.listWatch.on('delete', (object) => this.dispatch(object, 'delete'));
    this.listWatch.on('error', (err: unknown) => this.onWatchError(err));
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  get(ref: ObjectRef): T | undefined {
    return this.listWatch.get(ref.name, ref.namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.listWatch.list(namespace);
  }

  trim(object: T): void {
    trimObject(object, this.kindTrim);
  }

  onEvent(handler: InformerEventHandler<T>): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    void this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.healthyTimer);
    await this.listWatch.stop();
    if (!this.isSynced) this.rejectSynced(new InformerStoppedError(this.path));
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    await this.listWatch.start();
    // A stop() that came while start() was waiting for the watch's response could not abort a
    // request ListWatch had not stored yet; abort it now that it has.
    if (this.stopped) return this.listWatch.stop();
  }

  /**
   * A watch was answered 200: once it has stayed open HEALTHY_WATCH_MS, the next failure starts the
   * back-off from its base again. Not on start() settling: it settles before a refused watch's error
   * is reported (watch.ts reports it a tick later), so taken as a success it would end the back-off
   * at every failure and have every informer retry a down API server every 200 ms.
   */
  private onWatchAnswered(): void {
    clearTimeout(this.healthyTimer);
    this.healthyTimer = setTimeout(() => (this.consecutiveFailures = 0), HEALTHY_WATCH_MS);
    // Only a back-off to forget: it must not keep a process alive.
    this.healthyTimer.unref();
  }

  private async listIntoCache(): Promise<KubernetesListObject<T>> {
    // Each page is trimmed as it arrives, so the fields the cache drops (managedFields, a pod's
    // spec) never pile up for the whole list: with 2,000 instances a restarted operator held every
    // untrimmed page of its ~14,000 objects until the last came in. dispatch() trims again (watch
    // events need it; a trimmed object stays as it is).
    const list = await listObjects<T>(this.options.kubeConfig, this.resource, (items) => {
      for (const item of items) this.trim(item);
    });
    // Stopped during the list: failing it keeps ListWatch from opening a watch nobody will close.
    if (this.stopped) throw new InformerStoppedError(this.path);
    // ListWatch fills its cache synchronously after this promise settles; setImmediate runs after
    // that continuation, so `synced` never resolves before the cache holds the list.
    setImmediate(() => {
      if (this.isSynced || this.stopped) return;
      this.isSynced = true;
      this.logger.debug('informer synced', { objects: list.items.length });
      this.resolveSynced();
    });
    return list;
  }

  private onWatchError(err: unknown): void {
    if (this.stopped) return;
    // The watch did not stay healthy long enough to forget the failures before it.
    clearTimeout(this.healthyTimer);
    this.consecutiveFailures += 1;
    const delayMs = Math.round(
      jitteredMs(exponentialBackoffMs(this.options.restartBackoff, this.consecutiveFailures), RESTART_JITTER),
    );
    const apiError = toKubeApiError(err);
    this.logger.warn('informer stopped on an error; restarting', {
      error: errorMessage(err),
      statusCode: apiError?.statusCode,
      failures: this.consecutiveFailures,
      delayMs,
    });
    this.options.onRestart?.();
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.run(), delayMs);
  }

  private dispatch(object: T, type: InformerEvent<T>['type']): void {
    // ListWatch has just stored this very object in its cache (a delete's is already dropped), so
    // trimming it in place trims the cache, before any handler sees it.
    if (type !== 'delete') this.trim(object);
    const key = objectKeyOf(object) ?? '';
    let event: InformerEvent<T>;
    if (type === 'update') {
      event = { type, object, previous: this.lastSeen.get(key) };
    } else {
      event = { type, object };
    }
    if (type === 'delete') this.lastSeen.delete(key);
    else this.lastSeen.set(key, object);
    for (const handler of this.handlers) {
      // ListWatch calls handlers inside its own try/catch that silently drops the event; log instead.
      try {
        handler(event);
      } catch (err) {
        this.logger.error('informer event handler failed', {
          key,
          type,
          error: errorMessage(err),
        });
      }
    }
  }
}
