import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { ADMIN_SECRET_KEYS, adminSecretName } from '../../../api/contract.js';
import type { CouchInstance, CouchInstanceSpec } from '../../../api/couch-instance.js';
import { loadOperatorConfig } from '../../../operator/config.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import type { Gateway, GatewayOptions } from '../../../gateway/gateway.js';
import {
  startKubeletStandIn,
  type KubeletStandIn,
} from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import type { CouchEngineKind } from '../../../local/couch-engine/index.js';
import { TEST_NODES } from '../control-plane-env.js';
import { basicAuth } from './http-request.js';
import {
  createCouchInstance,
  readCouchInstance,
  startTestGateway,
  UNLIMITED_FREE_INSTANCES,
} from './gateway-harness.js';
import { testLogger } from '../test-logger.js';

/** The whole platform for one namespace, in this process: gateway, operator and kubelet stand-in. */
export interface TestPlatform {
  gateway: Gateway;
  /** The operator running now (restartOperator replaces it). */
  readonly operator: RunningOperator;
  /** Stops the operator (gracefully, as a rollout does) and starts a new one with the same settings. */
  restartOperator(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts what `make run` runs, scoped to one namespace: the gateway first (the operator writes its
 * URL into every instance's status.endpoint), then the real operator and the kubelet stand-in.
 */
export async function startTestPlatform(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  gatewayEnv?: Record<string, string>;
  /** More operator settings, e.g. the backups' object storage, or SETTEE_SIGNING_MASTER_SECRET for QueueBindings. */
  operatorEnv?: Record<string, string>;
  writers?: GatewayOptions['writers'];
  /** The webhook queue, hosted by the gateway as in `make run`. */
  queue?: GatewayOptions['queue'];
  /** Every pod on this engine (default: Apache CouchDB for couchdb:3.* where a release is available). */
  engineKind?: CouchEngineKind;
}): Promise<TestPlatform> {
  const { kubeConfig, namespace } = options;
  const dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-platform-'));
  const gateway = await startTestGateway({
    kubeConfig,
    namespace,
    // A held request waits for a wake: the operator, the StatefulSet controller, the scheduler and
    // an engine process started by the kubelet stand-in, far slower on a loaded CI machine than the
    // product's 15 s default allows for. Suites about the timeout itself set their own.
    env: { SETTEE_GATEWAY_WAKE_TIMEOUT: '60s', ...options.gatewayEnv },
    writers: options.writers,
    queue: options.queue,
  });
  let operator: RunningOperator | undefined;
  let standIn: KubeletStandIn | undefined;
  const stop = async (): Promise<void> => {
    await gateway.stop();
    await operator?.stop();
    await standIn?.stop();
    await fs.rm(dataRoot, { recursive: true, force: true });
  };
  const launchOperator = () =>
    startOperator({
      config: loadOperatorConfig({
        SETTEE_WATCH_NAMESPACE: namespace,
        SETTEE_LEADER_ELECTION: 'false',
        SETTEE_METRICS_PORT: '0',
        SETTEE_ENDPOINT_TEMPLATE: `${gateway.url}/db/{namespace}/{name}`,
        SETTEE_SHUTDOWN_TIMEOUT: '5s',
        SETTEE_QUEUE_BASE_URL: gateway.url,
        ...UNLIMITED_FREE_INSTANCES,
        ...options.operatorEnv,
      }),
      kubeConfig,
      logger: testLogger('operator'),
    });
  try {
    operator = await launchOperator();
    standIn = await startKubeletStandIn({
      kubeConfig,
      namespace,
      dataRoot,
      nodes: TEST_NODES,
      logger: testLogger('kubelet-stand-in'),
      ...(options.engineKind ? { engineKind: options.engineKind } : {}),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const running = operator;
  return {
    gateway,
    get operator() {
      return operator ?? running;
    },
    async restartOperator() {
      await operator?.stop();
      operator = undefined;
      operator = await launchOperator();
    },
    stop,
  };
}

/** Waits until the instance satisfies `check`, and returns it. */
export async function waitForInstance(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  check: (instance: CouchInstance) => boolean,
  timeoutMs = 30_000,
): Promise<CouchInstance> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const instance = await readCouchInstance(kubeConfig, ref);
    if (check(instance)) return instance;
    if (Date.now() > deadline)
      throw new Error(
        `instance ${ref.namespace}/${ref.name} did not get there: ${JSON.stringify(instance.status)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The generated admin credentials, from the instance's Secret as a tenant reads them. */
export async function readAdminCredentials(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
): Promise<{ username: string; password: string; url: string }> {
  const secret = await kubeConfig
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ name: adminSecretName(ref.name), namespace: ref.namespace });
  const decode = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  return {
    username: decode(ADMIN_SECRET_KEYS.username),
    password: decode(ADMIN_SECRET_KEYS.password),
    url: decode(ADMIN_SECRET_KEYS.url),
  };
}

/** An instance a test talks to as its tenant would: its endpoint and its admin's credentials. */
export interface ServingInstance {
  instance: CouchInstance;
  /** status.endpoint, the gateway URL of the instance. */
  endpoint: string;
  admin: { username: string; password: string; url: string };
  /** The admin's Basic Authorization header. */
  auth: string;
}

/**
 * Creates an instance and waits until `until` holds (default: Running), then reads its endpoint
 * and admin credentials: the set-up of every suite that talks CouchDB to an instance. The wait
 * (default 60 s) spans the first start of its engine by the kubelet stand-in.
 */
export async function createServingInstance(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  spec: CouchInstanceSpec,
  options: { until?: (instance: CouchInstance) => boolean; timeoutMs?: number } = {},
): Promise<ServingInstance> {
  await createCouchInstance(kubeConfig, ref, spec);
  const instance = await waitForInstance(
    kubeConfig,
    ref,
    options.until ?? ((candidate) => candidate.status?.phase === 'Running'),
    options.timeoutMs ?? 60_000,
  );
  const admin = await readAdminCredentials(kubeConfig, ref);
  return {
    instance,
    endpoint: instance.status?.endpoint ?? '',
    admin,
    auth: basicAuth(admin.username, admin.password),
  };
}
