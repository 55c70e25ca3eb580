import type { KubeConfig } from '@kubernetes/client-node';
import crypto from 'node:crypto';
import type http from 'node:http';
import type { Logger } from 'winston';
import { Registry } from 'prom-client';
import { isFirstStart } from '../api/first-start.js';
import { requestUsageWriterId } from '../api/request-usage.js';
import { makeKubeClients } from '../kube/clients.js';
import { InformerFactory } from '../kube/informer-factory.js';
import { objectKey, parseObjectKey } from '../kube/controller-runtime/object-key.js';
import { createGatewayApp } from './app.js';
import type { GatewayConfig } from './config.js';
import { ShuttingDownError } from './http/errors.js';
import { startServer } from './http/server.js';
import { DatabaseCreateTurns } from './envelope/database-create-turns.js';
import { FreeEnvelopeGuard, isFreePlan } from './envelope/free-envelope-guard.js';
import { RequestMeter } from './envelope/request-meter.js';
import { requestUsageLeaseWriter, type RequestUsageWriter } from './envelope/request-usage-lease.js';
import { RequestUsageReporter } from './envelope/request-usage-reporter.js';
import { createGatewayMetrics, type GatewayMetrics } from './metrics.js';
import { activityLeaseWriter, type ActivityLeaseWriter } from './proxy/activity-lease.js';
import { ActivityReporter } from './proxy/activity-reporter.js';
import { AwaitReady } from './proxy/await-ready.js';
import { EndpointCache } from './proxy/endpoint-cache.js';
import { followInstanceChanges } from './proxy/follow-instance-changes.js';
import { InstanceConcurrency } from './proxy/instance-concurrency.js';
import { createInstanceHandler } from './proxy/instance-handler.js';
import { createFastPathDecider } from './proxy/fast-path.js';
import { UpstreamSockets } from './http/upstream-sockets.js';
import { probeSystemDatabases, probeUp } from '../couchdb/probe-up.js';
import { RouteTable } from './proxy/route-table.js';
import { TrustedProxies } from './http/trusted-proxies.js';
import { createUpstreamAgent } from './proxy/upstream-agent.js';
import { wakeRequestWriter, Waker, type WakeRequestWriter } from './proxy/waker.js';

/** The webhook queue as the gateway hosts it (gateway/queue's QueueService fits). */
export interface HostedQueue {
  readonly handler: http.RequestListener;
  /** Served on the gateway's /metrics beside its own. */
  readonly metrics?: Registry;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface GatewayOptions {
  config: GatewayConfig;
  kubeConfig: KubeConfig;
  logger: Logger;
  /** The webhook queue (issue 5): its handler serves QUEUE_PATH_PREFIX, it starts and stops with the gateway. */
  queue?: HostedQueue;
  /** Replace the API writes (tests count them); default: the real ones. */
  writers?: {
    wakeRequest?: WakeRequestWriter;
    activityLease?: ActivityLeaseWriter;
    requestUsage?: RequestUsageWriter;
  };
}

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly metrics: GatewayMetrics;
  /** Graceful: stops accepting, ends held requests with 503, drains for shutdownTimeoutMs, stops watching. */
  stop(): Promise<void>;
}

/** Upper bound for one /_up probe; a starting CouchDB that accepted the connection answers in milliseconds. */
const PROBE_TIMEOUT_MS = 1_000;
/**
 * The pause between two probes while an instance's recent boots say it cannot be up yet: at most
 * this much is added to a boot a quarter faster than its fastest recent one (probe-schedule.ts).
 */
const SPARSE_PROBE_INTERVAL_MS = 50;

/**
 * The composition root as a function (main.ts calls it with the environment's config; tests call it
 * in-process): informers -> route table and endpoint cache -> wake path and activity -> handler ->
 * app -> server. Resolves once the caches are filled and the server listens.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, kubeConfig } = options;
  const logger = options.logger;
  const clients = makeKubeClients(kubeConfig);
  const metrics = createGatewayMetrics();
  const informers = new InformerFactory({ kubeConfig, namespace: config.watchNamespace, logger });
  const routes = new RouteTable(informers);
  const endpoints = new EndpointCache(informers);
  const agent = createUpstreamAgent({
    connections: config.upstream.maxConnectionsPerAddress,
    idleTimeoutMs: config.upstream.idleTimeoutMs,
    headersTimeoutMs: config.upstream.headersTimeoutMs,
  });
  const awaitReady = new AwaitReady({
    endpoints,
    probe: (origin, firstStart) =>
      firstStart ? probeSystemDatabases(origin, PROBE_TIMEOUT_MS) : probeUp(origin, PROBE_TIMEOUT_MS),
    isFirstStart: (instance) => isFirstStart(routes.get(instance)?.status?.phase),
    holdQueueLimit: config.wake.holdQueueLimit,
    timeoutMs: config.wake.timeoutMs,
    probeIntervalMs: config.wake.probeIntervalMs,
    sparseProbeIntervalMs: Math.max(SPARSE_PROBE_INTERVAL_MS, config.wake.probeIntervalMs),
    onReleased: (_instance, wakeMs) => metrics.observeWake(wakeMs / 1000),
    logger: logger.child({ part: 'await-ready' }),
  });
  const waker = new Waker({
    write: options.writers?.wakeRequest ?? wakeRequestWriter(clients.customObjects),
    lookup: (ref) => routes.get(ref),
    isWanted: (key) => awaitReady.isHolding(key),
    retryIntervalMs: config.wake.retryIntervalMs,
    onRequested: () => metrics.countWakeRequest(),
    logger: logger.child({ part: 'waker' }),
  });
  const unfollow = followInstanceChanges({ routes, awaitReady, waker });
  const envelope = config.envelope.enabled ? new FreeEnvelopeGuard(config.envelope) : undefined;
  const meter = new RequestMeter(metrics.registry);
  const unfollowPlans = routes.onChange((ref, instance) => {
    if (instance === undefined || !isFreePlan(instance)) envelope?.forget(objectKey(ref));
    if (instance === undefined) meter.forget(objectKey(ref));
  });
  const usage = new RequestUsageReporter({
    meter,
    write: options.writers?.requestUsage ?? requestUsageLeaseWriter(clients.customObjects),
    // A suffix per process: a restart under the same replica name never overwrites the counts before it.
    writerId: requestUsageWriterId(config.activity.replicaName, crypto.randomBytes(3).toString('hex')),
    intervalMs: config.activity.usageReportIntervalMs,
    onWritten: (outcome) => metrics.countUsageWrite(outcome),
    logger: logger.child({ part: 'request-usage' }),
  });
  const activity = new ActivityReporter({
    write: options.writers?.activityLease ?? activityLeaseWriter(clients.customObjects),
    intervalMs: config.activity.reportIntervalMs,
    holderIdentity: config.activity.replicaName,
    // Waking or starting: nowhere to send its requests yet, and not Running by the operator's word.
    postpone: (key) => {
      if (awaitReady.readyOrigin(key) !== undefined) return false;
      const { namespace = '', name } = parseObjectKey(key);
      return routes.get({ namespace, name })?.status?.phase !== 'Running';
    },
    onRenewed: (outcome) => metrics.countRenewal(outcome),
    logger: logger.child({ part: 'activity' }),
  });
  const trustedProxies = TrustedProxies.parse(config.trustedProxies);
  const concurrency = new InstanceConcurrency(config.clients.maxInstanceRequests);
  const proxyLogger = logger.child({ part: 'proxy' });
  const handleInstance = createInstanceHandler({
    routes,
    awaitReady,
    waker,
    activity,
    agent,
    trustedProxies,
    upstreamHeadersTimeoutMs: config.upstream.headersTimeoutMs,
    metrics,
    retryAfterSeconds: config.wake.retryAfterSeconds,
    envelope,
    createTurns: new DatabaseCreateTurns(),
    concurrency,
    meter,
    logger: proxyLogger,
  });

  let draining = false;
  // The fast path shares every object of the full path above; it owns only its instance sockets.
  const upstreamSockets = config.fastPath
    ? new UpstreamSockets({
        maxConnectionsPerAddress: config.upstream.maxConnectionsPerAddress,
        idleTimeoutMs: config.upstream.idleTimeoutMs,
      })
    : undefined;
  const fastPath = upstreamSockets && {
    decide: createFastPathDecider({
      domain: config.domain,
      routes,
      awaitReady,
      activity,
      trustedProxies,
      upstreamHeadersTimeoutMs: config.upstream.headersTimeoutMs,
      idleTimeoutMs: config.clients.idleTimeoutMs,
      metrics,
      envelope,
      meter,
      concurrency,
      isDraining: () => draining,
      logger: proxyLogger,
    }),
    sockets: upstreamSockets,
    upstreamHeadersTimeoutMs: config.upstream.headersTimeoutMs,
    retryAfterSeconds: config.wake.retryAfterSeconds,
  };
  const app = createGatewayApp({
    domain: config.domain,
    handleInstance,
    registry: options.queue?.metrics
      ? Registry.merge([metrics.registry, options.queue.metrics])
      : metrics.registry,
    readiness: [
      { name: 'informers', isReady: () => informers.hasSynced() },
      { name: 'not-draining', isReady: () => !draining },
    ],
    handleQueue: options.queue?.handler,
    retryAfterSeconds: config.wake.retryAfterSeconds,
    logger,
  });

  informers.startAll();
  try {
    await informers.waitForSync();
    await options.queue?.start();
  } catch (err) {
    await informers.stopAll();
    throw err;
  }
  usage.start();
  const server = await startServer({
    listener: app.listener,
    host: config.listen.host,
    port: config.listen.port,
    tls: config.tls,
    clients: config.clients,
    fastPath,
    logger,
  });

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    draining = true;
    app.startDraining();
    awaitReady.close(new ShuttingDownError());
    await server.close(config.shutdownTimeoutMs);
    unfollow();
    unfollowPlans();
    waker.stop();
    await activity.stop();
    // After the drain, so every request served is in the last write.
    await usage.stop();
    await options.queue?.stop();
    await informers.stopAll();
    await agent.close();
    upstreamSockets?.close();
    logger.info('gateway stopped');
  };
  return {
    url: server.url,
    port: server.port,
    metrics,
    stop: () => (stopping ??= stop()),
  };
}
