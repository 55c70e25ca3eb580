import type { Logger } from 'winston';
import type { BindingRegistry, QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import { connectionFingerprint, type DatabaseConnections } from '../stores/database-connections.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import { DeliveryWorker } from './delivery-worker.js';
import { createHttpDeliverer, type Deliverer } from './http-delivery.js';
import { compileAddressPolicy } from '../core/address-policy.js';
import { createGuardedAgents, type GuardedAgents } from './guarded-agents.js';
import type { HostResolver } from './guarded-lookup.js';

export interface DeliveryWorkersOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
  /** Host name resolution for the SSRF guard (default: the system resolver). */
  resolve?: HostResolver;
  metrics?: DeliveryMetrics;
}

export interface DeliveryWorkers {
  /** Stops every worker, waiting for deliveries in flight up to the delivery timeout. */
  stop(): Promise<void>;
}

/**
 * Runs one DeliveryWorker per binding in the registry, following its changes: a new binding gets
 * a worker, a new signing key is handed to the running worker, a new address or password restarts
 * it, and a removed binding stops it.
 */
export function startDeliveryWorkers(options: DeliveryWorkersOptions): DeliveryWorkers {
  const { registry, connections, config } = options;
  const logger = options.logger.child({ component: 'queue-delivery' });
  const policy = compileAddressPolicy(config.ssrfAllowlist);
  const workers = new Map<string, { fingerprint: string; worker: DeliveryWorker; agents: GuardedAgents }>();
  const stopping = new Set<Promise<void>>();

  const stopWorker = (key: string): void => {
    const running = workers.get(key);
    if (!running) return;
    workers.delete(key);
    const done = running.worker
      .stop()
      .finally(() => {
        running.agents.http.destroy();
        running.agents.https.destroy();
      })
      .finally(() => stopping.delete(done));
    stopping.add(done);
  };

  const upsert = (target: QueueTarget): void => {
    const fingerprint = connectionFingerprint(target);
    const running = workers.get(target.key);
    if (running?.fingerprint === fingerprint) return running.worker.update(target);
    stopWorker(target.key);
    // Agents of the binding's own: an agent queues the requests to one host beyond its sockets
    // (the worker's concurrency) in one line, so agents shared by the bindings held one tenant's
    // deliveries behind another's slow ones to the same host (delivery-isolation.test.ts).
    const agents = createGuardedAgents({
      policy,
      resolve: options.resolve,
      maxSockets: config.workerConcurrency,
    });
    const deliverer: Deliverer = createHttpDeliverer({ agents, maxRedirects: config.maxRedirects });
    const worker = new DeliveryWorker({
      target,
      redis: connections.get(target),
      config,
      deliverer,
      logger,
      metrics: options.metrics,
    });
    workers.set(target.key, { fingerprint, worker, agents });
    worker.start();
    logger.info('delivery worker started', { binding: target.key });
  };

  const unsubscribe = registry.subscribe((event) => {
    if (event.type === 'upsert') upsert(event.target);
    else stopWorker(event.key);
  });
  for (const target of registry.list()) upsert(target);

  return {
    async stop() {
      unsubscribe();
      for (const key of [...workers.keys()]) stopWorker(key);
      await Promise.all([...stopping]);
    },
  };
}
