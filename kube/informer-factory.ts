import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import type { BackoffPolicy } from './controller-runtime/backoff.js';
import type { ObjectTrims } from './object-trim.js';
import { DEFAULT_INFORMER_RESTART_BACKOFF, ResilientInformer, type Informer } from './informer.js';
import { resourceIdentity, type WatchedResource } from './resource-path.js';
import type { WatchTimeoutPolicy } from './watch.js';

export interface InformerFactoryOptions {
  kubeConfig: KubeConfig;
  /** Scope of every informer that does not name its own namespace; undefined = all namespaces. */
  namespace?: string | undefined;
  logger: Logger;
  restartBackoff?: BackoffPolicy;
  /** How long each watch request lives (watch.ts's DEFAULT_WATCH_TIMEOUT when not given). */
  watchTimeout?: WatchTimeoutPolicy;
  onRestart?: (resource: WatchedResource) => void;
  /** What each kind's cache need not keep (object-trim.ts): the fields no controller of this process reads. */
  trims?: ObjectTrims;
}

/**
 * Hands out one shared informer per resource (path + selectors), so controllers that watch the
 * same objects share one list+watch and one cache. The composition root starts, awaits and stops
 * them all together.
 */
export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubernetesObject>>();
  private started = false;

  constructor(private readonly options: InformerFactoryOptions) {}

  informerFor<T extends KubernetesObject>(resource: WatchedResource): Informer<T> {
    const scoped: WatchedResource = { ...resource, namespace: resource.namespace ?? this.options.namespace };
    const identity = resourceIdentity(scoped);
    let informer = this.informers.get(identity);
    if (!informer) {
      informer = new ResilientInformer<KubernetesObject>({
        kubeConfig: this.options.kubeConfig,
        resource: scoped,
        logger: this.options.logger,
        restartBackoff: this.options.restartBackoff ?? DEFAULT_INFORMER_RESTART_BACKOFF,
        onRestart: () => this.options.onRestart?.(scoped),
        watchTimeout: this.options.watchTimeout,
        trims: this.options.trims,
      });
      this.informers.set(identity, informer);
      if (this.started) informer.start();
    }
    return informer as unknown as Informer<T>;
  }

  startAll(): void {
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
  }

  /** Resolves when every informer has listed once; rejects if one is stopped first. */
  async waitForSync(): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.synced));
  }

  hasSynced(): boolean {
    return [...this.informers.values()].every((informer) => informer.hasSynced());
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.informers.values()].map((informer) => informer.stop()));
  }
}
