import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'winston';
import { renderQueueUrl } from '../../../api/queue-binding.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { BindingRegistry, type QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import type { QueueConfig } from '../../../gateway/queue/core/config.js';
import { DatabaseConnections } from '../../../gateway/queue/stores/database-connections.js';
import {
  startDeliveryWorkers,
  type DeliveryWorkers,
} from '../../../gateway/queue/workers/delivery-workers.js';
import { createQueueHandler } from '../../../gateway/queue/http/queue-handler.js';
import type { RotationRequestWriter } from '../../../gateway/queue/bindings/signing-key-rotation.js';
import {
  startScheduleTickers,
  type ScheduleTickers,
} from '../../../gateway/queue/workers/schedule-tickers.js';
import type { HostResolver } from '../../../gateway/queue/workers/guarded-lookup.js';
import { closeServer } from './test-receiver.js';
import { CLIENT_IDLE_TIMEOUT_MS } from '../../../gateway/config.js';

export interface TestQueueGateway {
  baseUrl: string;
  registry: BindingRegistry;
  connections: DatabaseConnections;
  queueUrl(target: Pick<QueueTarget, 'namespace' | 'name'>): string;
  startWorkers(): void;
  stopWorkers(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The queue's handler serving a loopback port as the gateway serves it (every URL under
 * QUEUE_PATH_PREFIX), with its registry filled directly instead of from informers.
 */
export async function startTestQueueGateway(options: {
  config: QueueConfig;
  targets: QueueTarget[];
  workers?: boolean;
  resolve?: HostResolver;
  logger?: Logger;
  /** Serves POST /v2/keys/rotate with this writer (the operator's annotation in the product). */
  rotationWriter?: RotationRequestWriter;
  /** CIDR ranges of proxies whose X-Forwarded-For names the publisher (SETTEE_GATEWAY_TRUSTED_PROXIES). */
  trustedProxies?: readonly string[];
}): Promise<TestQueueGateway> {
  const logger = options.logger ?? createSilentLogger();
  const registry = new BindingRegistry();
  for (const target of options.targets) registry.set(target);
  const connections = new DatabaseConnections(logger);
  const server = http.createServer(
    createQueueHandler({
      registry,
      connections,
      config: options.config,
      logger,
      rotationWriter: options.rotationWriter,
      trustedProxies: options.trustedProxies,
    }),
  );
  // As the gateway keeps its client connections (server.ts): Node's 5 s default races a loaded
  // client's reuse of an idle connection ("other side closed"), which the real gateway does not.
  server.keepAliveTimeout = CLIENT_IDLE_TIMEOUT_MS;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let workers: DeliveryWorkers | undefined;
  let tickers: ScheduleTickers | undefined;
  const gateway: TestQueueGateway = {
    baseUrl,
    registry,
    connections,
    queueUrl: (target) => renderQueueUrl(baseUrl, target),
    startWorkers() {
      workers ??= startDeliveryWorkers({
        registry,
        connections,
        config: options.config,
        logger,
        resolve: options.resolve,
      });
      tickers ??= startScheduleTickers({ registry, connections, config: options.config, logger });
    },
    async stopWorkers() {
      await Promise.all([workers?.stop(), tickers?.stop()]);
      workers = undefined;
      tickers = undefined;
    },
    async stop() {
      await gateway.stopWorkers();
      await closeServer(server);
      await connections.closeAll();
    },
  };
  if (options.workers ?? true) gateway.startWorkers();
  return gateway;
}
