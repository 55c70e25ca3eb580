import type { KubeConfig } from '@kubernetes/client-node';
import type http from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from 'winston';
import { BindingRegistry } from './core/binding-registry.js';
import type { QueueConfig } from './core/config.js';
import { DatabaseConnections } from './stores/database-connections.js';
import { startDeliveryWorkers, type DeliveryWorkers } from './workers/delivery-workers.js';
import { DeliveryMetrics } from './workers/delivery-metrics.js';
import { watchQueueBindings, type KubeBindingSource } from './bindings/kube-binding-source.js';
import { createQueueHandler } from './http/queue-handler.js';
import { startScheduleTickers, type ScheduleTickers } from './workers/schedule-tickers.js';
import { rotationAnnotationWriter } from './bindings/signing-key-rotation.js';
import { makeKubeClients } from '../../kube/clients.js';

export interface QueueServiceOptions {
  kubeConfig: KubeConfig;
  config: QueueConfig;
  logger: Logger;
  /** Serve the bindings of one namespace only; default every namespace. */
  namespace?: string | undefined;
  /** The gateway's SETTEE_GATEWAY_TRUSTED_PROXIES: whose X-Forwarded-For names a publisher's callerIp. */
  trustedProxies?: readonly string[] | undefined;
}

/** The gateway's whole queue: serve URLs under QUEUE_PATH_PREFIX with `handler`, then `start()`; `stop()` on shutdown. */
export interface QueueService {
  readonly handler: http.RequestListener;
  readonly registry: BindingRegistry;
  /** The queue's metrics, which the gateway serves on its /metrics. */
  readonly metrics: Registry;
  /** Starts the binding informers and the delivery workers; resolves once the bindings are listed. */
  start(): Promise<void>;
  /** Stops watching and delivering (waiting for deliveries in flight) and closes the database connections. */
  stop(): Promise<void>;
}

export function createQueueService(options: QueueServiceOptions): QueueService {
  const logger = options.logger.child({ component: 'queue' });
  const registry = new BindingRegistry();
  const connections = new DatabaseConnections(logger);
  const metrics = new DeliveryMetrics();
  const handler = createQueueHandler({
    registry,
    connections,
    config: options.config,
    logger,
    rotationWriter: rotationAnnotationWriter(makeKubeClients(options.kubeConfig).customObjects),
    trustedProxies: options.trustedProxies,
  });
  let source: KubeBindingSource | undefined;
  let workers: DeliveryWorkers | undefined;
  let tickers: ScheduleTickers | undefined;
  const releaseRemoved = registry.subscribe((event) => {
    if (event.type === 'delete') void connections.release(event.key);
  });
  return {
    handler,
    registry,
    metrics: metrics.registry,
    async start() {
      workers = startDeliveryWorkers({ registry, connections, config: options.config, logger, metrics });
      tickers = startScheduleTickers({ registry, connections, config: options.config, logger });
      source = watchQueueBindings({
        kubeConfig: options.kubeConfig,
        namespace: options.namespace,
        registry,
        logger,
      });
      await source.synced;
    },
    async stop() {
      await source?.stop();
      await Promise.all([workers?.stop(), tickers?.stop()]);
      releaseRemoved();
      await connections.closeAll();
    },
  };
}
