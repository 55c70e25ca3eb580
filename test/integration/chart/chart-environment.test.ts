import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import { loadOperatorConfig } from '../../../operator/config.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { loadQueueConfig, QUEUE_CONFIG_DEFAULTS } from '../../../gateway/queue/core/config.js';
import {
  containerEnvironment,
  findObject,
  FULL_VALUES,
  renderChart,
} from '../../helpers/chart/chart-harness.js';

const NAMESPACE = 'settee-system';
const POD = 'pod-0';

function environmentOf(objects: readonly KubernetesObject[], deployment: string): Record<string, string> {
  return containerEnvironment({
    deployment: findObject<V1Deployment>(objects, 'Deployment', deployment),
    objects,
    podName: POD,
    namespace: NAMESPACE,
  });
}

/*
 * The environment the chart gives each container, read by the very loaders the processes run at
 * start-up: every variable must be valid (they throw otherwise) and mean what the value said.
 */
describe("the chart's container environment, read by the components' own configuration loaders", () => {
  describe('with the default values', () => {
    let objects: KubernetesObject[];
    beforeAll(async () => {
      objects = await renderChart({ release: 'prod', namespace: NAMESPACE });
    });

    it('when the operator reads it, then it serves every namespace, elects a leader in the release namespace and serves metrics on every interface', () => {
      const config = loadOperatorConfig(environmentOf(objects, 'prod-settee-operator'));
      expect(config.watchNamespace).toBeUndefined();
      expect(config.kube).toEqual({
        requestTimeoutMs: 30_000,
        watchTimeout: { minMs: 300_000, graceMs: 30_000 },
      });
      expect(config.leaderElection).toMatchObject({
        enabled: true,
        namespace: NAMESPACE,
        leaseName: 'prod-settee-operator',
        identity: POD,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      });
      expect(config.observability).toEqual({ logLevel: 'info', metricsHost: '0.0.0.0', metricsPort: 8080 });
      expect(config.shutdownTimeoutMs).toBe(30_000);
      expect(config.couchInstance).toMatchObject({
        endpointTemplate: `http://prod-settee-gateway.${NAMESPACE}.svc:80/db/{namespace}/{name}`,
        defaultVersion: '3.5.1',
        freeEnvelope: { storage: '1Gi', cpu: '1', memory: '1Gi' },
      });
    });

    it('when the gateway reads it, then it listens on every interface over plain HTTP with the default wake limits and queue settings', () => {
      const env = environmentOf(objects, 'prod-settee-gateway');
      const config = loadGatewayConfig(env);
      expect(config.listen).toEqual({ host: '0.0.0.0', port: 8080 });
      expect(config.tls).toBeUndefined();
      expect(config.domain).toBeUndefined();
      expect(config.fastPath).toBe(true);
      expect(config.wake).toMatchObject({ holdQueueLimit: 1_000, timeoutMs: 15_000, retryAfterSeconds: 5 });
      expect(config.upstream.headersTimeoutMs).toBe(300_000);
      expect(config.clients).toEqual({
        headersTimeoutMs: 60_000,
        idleTimeoutMs: 65_000,
        maxConnections: undefined,
        maxHeaderBytes: 16_384,
        maxInstanceRequests: 0,
      });
      expect(config.trustedProxies).toEqual([]);
      expect(config.activity.replicaName).toBe(POD);
      expect(config.shutdownTimeoutMs).toBe(30_000);
      expect(config.envelope).toEqual({
        enabled: true,
        ratesPerSecond: { read: 20, write: 10, query: 5 },
        replicas: 2,
        storage: { text: '1Gi', bytes: 2 ** 30 },
        databases: 20,
      });
      const { consumerName: _consumerName, ...queue } = loadQueueConfig(env);
      expect(queue).toEqual({ ...QUEUE_CONFIG_DEFAULTS });
    });

    it('when the gateway reads it, then the queue master secret is nowhere in it', () => {
      const env = environmentOf(objects, 'prod-settee-gateway');
      const operatorEnv = environmentOf(objects, 'prod-settee-operator');
      const master = operatorEnv.SETTEE_SIGNING_MASTER_SECRET ?? '';
      expect(master).toHaveLength(64);
      expect(Object.values(env)).not.toContain(master);
    });
  });

  describe('with every value set', () => {
    let objects: KubernetesObject[];
    beforeAll(async () => {
      objects = await renderChart({
        release: 'prod',
        namespace: NAMESPACE,
        valuesFiles: [FULL_VALUES],
        set: { watchNamespace: 'tenants' },
      });
    });

    it('when the operator reads it, then each value arrives with its meaning', () => {
      const config = loadOperatorConfig(environmentOf(objects, 'prod-couch-operator'));
      expect(config.watchNamespace).toBe('tenants');
      expect(config.controllers).toMatchObject({
        workers: 8,
        instanceWorkers: 24,
        resyncPeriodMs: 300_000,
      });
      expect(config.kube).toEqual({
        requestTimeoutMs: 20_000,
        watchTimeout: { minMs: 180_000, graceMs: 30_000 },
      });
      expect(config.leaderElection).toMatchObject({
        leaseDurationMs: 20_000,
        renewDeadlineMs: 15_000,
        retryPeriodMs: 3_000,
      });
      expect(config.observability).toEqual({ logLevel: 'debug', metricsHost: '0.0.0.0', metricsPort: 9090 });
      expect(config.shutdownTimeoutMs).toBe(20_000);
      expect(config.couchInstance).toEqual({
        endpointTemplate: 'https://{name}.{namespace}.couch.example.com',
        defaultVersion: '3.4.3',
        vendorName: 'Example Cloud',
        freeEnvelope: { storage: '512Mi', cpu: '500m', memory: '512Mi' },
        freeInstancesPerNamespace: 3,
        defaultResources: {
          requests: { cpu: '50m', memory: '128Mi' },
          limits: { cpu: '250m', memory: '256Mi' },
        },
        replicationCheckTimeoutMs: 2_000,
        usageMeasureIntervalMs: 120_000,
        usageMeasureTimeoutMs: 10_000,
        usageMeterIntervalMs: 600_000,
        startDeadlineMs: 900_000,
        startDeadline: '15m',
      });
      // The queue's quotas are the operator's: it publishes them in each binding's status.limits.
      // maxDelay and maxTimeout are no settings: a binding without a plan gets QStash's free plan's.
      expect(config.queueBinding.limitDefaults).toEqual({
        maxDelay: '7d',
        maxTimeout: '15m',
        maxDeadLetters: 500,
        maxQueues: 25,
        maxQueueParallelism: 40,
        maxSchedules: 30,
        maxUrlGroups: 5,
        maxUrlGroupEndpoints: 250,
      });
    });

    it('when the gateway reads it, then each value arrives with its meaning', () => {
      const env = environmentOf(objects, 'prod-couch-gateway');
      const config = loadGatewayConfig(env);
      expect(config).toMatchObject({
        listen: { host: '0.0.0.0', port: 8443 },
        tls: { certFile: '/etc/settee/tls/tls.crt', keyFile: '/etc/settee/tls/tls.key' },
        domain: 'couch.example.com',
        watchNamespace: 'tenants',
        fastPath: false,
        wake: { holdQueueLimit: 200, timeoutMs: 3_000, retryAfterSeconds: 2, probeIntervalMs: 20 },
        upstream: { maxConnectionsPerAddress: 64, idleTimeoutMs: 10_000, headersTimeoutMs: 120_000 },
        clients: {
          headersTimeoutMs: 30_000,
          idleTimeoutMs: 75_000,
          maxConnections: 20_000,
          maxHeaderBytes: 32_768,
        },
        trustedProxies: ['10.244.0.0/16', 'fd00:10:244::/56'],
        logLevel: 'debug',
        shutdownTimeoutMs: 25_000,
        activity: { usageReportIntervalMs: 60_000 },
        envelope: {
          enabled: true,
          ratesPerSecond: { read: 40, write: 20, query: 8 },
          replicas: 3, // gateway.autoscaling.minReplicas
          storage: { text: '512Mi', bytes: 512 * 2 ** 20 },
          databases: 50,
        },
      });
      expect(loadQueueConfig(env)).toMatchObject({
        ssrfAllowlist: ['10.20.0.0/16', 'fd00::/8'],
        maxBodyBytes: 524_288,
        maxBatchSize: 50,
        maxBatchBytes: 5_242_880,
        defaultRetries: 2,
        maxRetries: 10,
        deliveryTimeoutMs: 10_000,
        reclaimIdleMs: 30_000,
        consumerLeaseMs: 4_000,
        workerConcurrency: 16,
        scheduleClaimLeaseMs: 6_000,
        delayWakeups: false,
        maxRedirects: 3,
        recordEvents: false,
      });
    });
  });
});
