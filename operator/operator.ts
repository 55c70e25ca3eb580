import { OPERATOR_CACHE_TRIMS } from './controllers/cache-trims.js';
import type { KubeConfig } from '../kube/clients.js';
import type { Logger } from 'winston';
import type { OperatorConfig } from './config.js';
import { FIELD_MANAGER } from '../kube/apply.js';
import { makeKubeClients } from '../kube/clients.js';
import { KubeEventRecorder } from '../kube/events.js';
import { InformerFactory } from '../kube/informer-factory.js';
import { InformerStoppedError } from '../kube/informer.js';
import { LeaderElector } from '../kube/leader-election.js';
import { resourceCollectionPath } from '../kube/resource-path.js';
import { startHealthServer } from '../observability/health-server.js';
import { errorMessage } from '../observability/logger.js';
import { createOperatorMetrics, type OperatorMetrics } from '../observability/metrics.js';
import { REGISTERED_CONTROLLERS } from './registered-controllers.js';
import { Controller } from '../kube/controller-runtime/controller.js';
import type { ControllerRegistration } from './controllers/registration.js';

export interface StartOperatorOptions {
  config: OperatorConfig;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Defaults to REGISTERED_CONTROLLERS; tests pass their own. */
  controllers?: readonly ControllerRegistration[];
  /**
   * This replica lost the Lease and has stopped reconciling (or the grace for that ran out); it
   * never leads again. main.ts exits; by default nothing happens (tests).
   */
  onLostLeadership?: () => void;
}

export interface RunningOperator {
  /** The port /metrics, /healthz and /readyz answer on (useful with SETTEE_METRICS_PORT=0). */
  readonly healthPort: number;
  readonly metrics: OperatorMetrics;
  /** True while this replica reconciles: it holds the Lease, or leader election is off. */
  isLeading(): boolean;
  /** Graceful: stop reconciling (in-flight reconciles finish), release the Lease, stop informers and the server. */
  stop(): Promise<void>;
}

/**
 * The operator's composition: clients -> shared informers -> controllers from the registration
 * list -> health server -> (once every informer has synced) leader election, which starts the
 * controllers while this replica leads and stops them when it does not. Informers run on standby
 * replicas too, so a standby is Ready and takes over with warm caches.
 */
export async function startOperator(options: StartOperatorOptions): Promise<RunningOperator> {
  const { config, kubeConfig, logger } = options;
  const metrics = createOperatorMetrics();
  const clients = makeKubeClients(kubeConfig, { requestTimeoutMs: config.kube.requestTimeoutMs });
  const informers = new InformerFactory({
    kubeConfig,
    namespace: config.watchNamespace,
    logger,
    watchTimeout: config.kube.watchTimeout,
    trims: OPERATOR_CACHE_TRIMS,
    onRestart: (resource) => metrics.countInformerRestart(resourceCollectionPath(resource)),
  });
  const events = new KubeEventRecorder({
    core: clients.core,
    component: FIELD_MANAGER,
    instance: config.leaderElection.identity,
    logger,
  });
  const controllers = (options.controllers ?? REGISTERED_CONTROLLERS).map((registration) => {
    const controllerLogger = logger.child({ controller: registration.name });
    const definition = registration.create({
      config,
      clients,
      informers,
      events,
      logger: controllerLogger,
      metricsRegistry: metrics.registry,
    });
    return new Controller({
      ...definition,
      name: registration.name,
      workers: definition.workers ?? config.controllers.workers,
      resyncPeriodMs: config.controllers.resyncPeriodMs,
      backoff: config.controllers.backoff,
      logger,
      metrics,
    });
  });

  let leading = false;
  const startControllers = (): void => {
    leading = true;
    metrics.setLeader(true);
    for (const controller of controllers) controller.start();
  };
  const stopControllers = async (): Promise<void> => {
    leading = false;
    metrics.setLeader(false);
    await Promise.all(controllers.map((controller) => controller.stop()));
  };
  const elector = config.leaderElection.enabled
    ? new LeaderElector({
        customObjects: clients.customObjects,
        ...config.leaderElection,
        logger,
        onStartedLeading: startControllers,
        onStoppedLeading: stopControllers,
        onLostLeadership: () => options.onLostLeadership?.(),
      })
    : undefined;

  const health = await startHealthServer({
    host: config.observability.metricsHost,
    port: config.observability.metricsPort,
    registry: metrics.registry,
    // Ready means "caches are warm", not "leading": a standby must be Ready to be a standby.
    readiness: [{ name: 'informers-synced', isReady: () => informers.hasSynced() }],
    logger,
  });

  let stopping = false;
  informers.startAll();
  const started = informers.waitForSync().then(
    () => {
      if (stopping) return;
      logger.info('informers synced', {
        controllers: controllers.map((c) => c.name),
        leaderElection: Boolean(elector),
      });
      if (elector) elector.start();
      else startControllers();
    },
    (err: unknown) => {
      if (!(err instanceof InformerStoppedError))
        logger.error('informers failed to sync', { error: errorMessage(err) });
    },
  );

  return {
    healthPort: health.port,
    metrics,
    isLeading: () => leading,
    async stop() {
      stopping = true;
      logger.info('shutting down');
      // Order matters: reconciles finish before the Lease is released, and both before the caches go.
      if (elector) await elector.stop();
      else await stopControllers();
      await informers.stopAll();
      await started;
      await health.close();
      logger.info('shut down');
    },
  };
}
