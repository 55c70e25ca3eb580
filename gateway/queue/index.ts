/**
 * The webhook queue, for the gateway's composition root. The simple way:
 *
 *   const queue = createQueueService({ kubeConfig, config: loadQueueConfig(), logger });
 *   if (isQueuePath(req.url)) queue.handler(req, res);   // in the server's request listener
 *   await queue.start();   // on shutdown: await queue.stop();
 *
 * The parts (registry, handler, workers, binding source) are exported for tests and other wiring.
 */
export { createQueueService, type QueueService, type QueueServiceOptions } from './queue-service.js';
export {
  loadQueueConfig,
  readQueueConfig,
  validateQueueConfig,
  QUEUE_CONFIG_DEFAULTS,
  type QueueConfig,
} from './core/config.js';
export { createQueueHandler, type QueueHandlerOptions } from './http/queue-handler.js';
export { isQueuePath } from '../queue-url/queue-path.js';
export {
  startDeliveryWorkers,
  type DeliveryWorkers,
  type DeliveryWorkersOptions,
} from './workers/delivery-workers.js';
export { watchQueueBindings, type KubeBindingSource } from './bindings/kube-binding-source.js';
export { BindingRegistry, type QueueTarget } from './core/binding-registry.js';
export { DatabaseConnections } from './stores/database-connections.js';
