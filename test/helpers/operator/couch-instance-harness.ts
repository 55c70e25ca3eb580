import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type CoreV1Event,
  type KubeConfig,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startKubeletStandIn } from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import { waitFor } from '../../../local/wait.js';
import { TEST_NODES } from '../control-plane-env.js';
import {
  ANNOTATION_WAKE_REQUESTED,
  activityLeaseName,
  LABEL_INSTANCE,
  SETTEE_GROUP,
  SETTEE_VERSION,
} from '../../../api/contract.js';
import {
  COUCH_INSTANCE_KIND,
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
  type CouchInstanceSpec,
} from '../../../api/couch-instance.js';
import { loadOperatorConfig } from '../../../operator/config.js';
import { couchInstanceController } from '../../../operator/controllers/couch-instance/registration.js';
import { formatMicroTime } from '../../../kube/micro-time.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import { customObjectHelpers } from '../custom-objects.js';
import { waitForEventsWithReasons } from '../events-with-reasons.js';
import { testControlPlane } from '../kube.js';

import { UNLIMITED_FREE_INSTANCES } from '../gateway/gateway-harness.js';

export { conditionOf } from '../custom-objects.js';

/**
 * Plays the kubelet for an instance whose "CouchDB" is a test server at podIP: the StatefulSet
 * controller's pod `<instance>-0`, once it exists, reported Running and Ready there.
 */
export async function reportPodReady(namespace: string, instance: string, podIP: string): Promise<void> {
  const { core } = testClients();
  const podName = `${instance}-0`;
  await waitFor(
    'the StatefulSet controller to create the pod',
    async () => core.readNamespacedPod({ namespace, name: podName }).then(() => true),
    { timeoutMs: 15_000 },
  );
  await core.patchNamespacedPodStatus(
    {
      name: podName,
      namespace,
      body: {
        status: {
          phase: 'Running',
          podIP,
          podIPs: [{ ip: podIP }],
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date() }],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** The clients a CouchInstance suite talks to the API server with, as a tenant or as the kubelet. */
export function testClients(kubeConfig: KubeConfig = testControlPlane().kubeConfig) {
  return {
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
  };
}

const instances = customObjectHelpers<CouchInstance, CouchInstanceSpec>({
  kind: COUCH_INSTANCE_KIND,
  plural: COUCH_INSTANCE_PLURAL,
  defaultTimeoutMs: 20_000,
});

export const instanceApi = instances.api;
export const readInstance = instances.read;
export const patchInstance = instances.mergePatch;
export const waitForInstance = instances.waitFor;

/**
 * Every version of one object the API server sends on a watch of `collection` (its path), in
 * order, so that a test sees a brief state that polling can miss.
 */
async function recordVersions<T>(collection: string, name: string): Promise<{ versions: T[]; stop(): void }> {
  const versions: T[] = [];
  const controller = await new Watch(testControlPlane().kubeConfig).watch(
    collection,
    { fieldSelector: `metadata.name=${name}` },
    (_type, object: T) => versions.push(object),
    () => undefined,
  );
  return { versions, stop: () => controller.abort() };
}

/** An instance's versions: Hibernating lasts as long as the pod's termination. */
export function recordInstanceVersions(namespace: string, name: string) {
  return recordVersions<CouchInstance>(
    `/apis/${SETTEE_GROUP}/${SETTEE_VERSION}/namespaces/${namespace}/${COUCH_INSTANCE_PLURAL}`,
    name,
  );
}

/** An instance's StatefulSet's versions: a woken one is awake for idleAfter only. */
export function recordStatefulSetVersions(namespace: string, name: string) {
  return recordVersions<V1StatefulSet>(`/apis/apps/v1/namespaces/${namespace}/statefulsets`, name);
}

export function createInstance(
  namespace: string,
  name: string,
  spec: CouchInstanceSpec,
): Promise<CouchInstance> {
  return instances.create(namespace, name, spec);
}

/**
 * How long a test waits for the kubelet stand-in to run an instance's engine for a new or woken pod
 * (claim, scheduling, engine process start, probes) and the operator to see it: seconds on a quiet
 * machine, far more on a loaded CI runner with two control planes. As the backup suites wait.
 */
export const ENGINE_START_MS = 60_000;

export const hasPhase = (phase: string) => (instance: CouchInstance) => instance.status?.phase === phase;

export async function readStatefulSet(namespace: string, name: string): Promise<V1StatefulSet> {
  return testClients().apps.readNamespacedStatefulSet({ namespace, name });
}

/**
 * The kubelet stand-in for a suite's namespace: the real StatefulSet controller and scheduler make
 * and place the instance's pod and claim, the stand-in runs the pod and provisions the claim.
 */
export async function startTestKubelet(namespace: string): Promise<{ stop(): Promise<void> }> {
  const dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-kubelet-'));
  const standIn = await startKubeletStandIn({
    kubeConfig: testControlPlane().kubeConfig,
    namespace,
    dataRoot,
    nodes: TEST_NODES,
    logger: createSilentLogger(),
  });
  return {
    async stop() {
      await standIn.stop();
      await fs.rm(dataRoot, { recursive: true, force: true });
    },
  };
}

/** Plays the gateway: renews the instance's activity Lease now (contract.ts). */
export async function renewActivity(namespace: string, instance: string): Promise<void> {
  const { coordination } = testClients();
  const name = activityLeaseName(instance);
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, labels: { [LABEL_INSTANCE]: instance } },
    spec: { holderIdentity: 'test-gateway', renewTime: formatMicroTime(new Date()) },
  };
  await coordination.patchNamespacedLease(
    { namespace, name, body, fieldManager: 'test-gateway', force: true },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}

/** Plays the gateway: asks for a wake with the current time (contract.ts). */
export async function requestWake(namespace: string, name: string): Promise<void> {
  await patchInstance(namespace, name, {
    metadata: { annotations: { [ANNOTATION_WAKE_REQUESTED]: new Date().toISOString() } },
  });
}

export async function eventsFor(namespace: string, name: string): Promise<CoreV1Event[]> {
  const events = await testClients().core.listNamespacedEvent({ namespace });
  return events.items.filter(
    (event) => event.involvedObject.kind === 'CouchInstance' && event.involvedObject.name === name,
  );
}

/** The instance's Events once every one of `reasons` is among them (recorded after the status). */
export function waitForEventReasons(
  namespace: string,
  name: string,
  reasons: readonly string[],
): Promise<CoreV1Event[]> {
  return waitForEventsWithReasons(`${namespace}/${name}`, () => eventsFor(namespace, name), reasons);
}

export interface TestOperatorOptions {
  namespace: string;
  /** Leader election in `namespace` with short timings; off by default. */
  identity?: string;
  env?: Record<string, string>;
}

/** A real operator, in this process, watching only the suite's namespace. */
export async function startTestOperator(options: TestOperatorOptions): Promise<RunningOperator> {
  const plane = testControlPlane();
  const config = loadOperatorConfig({
    SETTEE_WATCH_NAMESPACE: options.namespace,
    SETTEE_METRICS_PORT: '0',
    SETTEE_LEADER_ELECTION: options.identity ? 'true' : 'false',
    SETTEE_LEADER_ELECTION_NAMESPACE: options.namespace,
    SETTEE_LEADER_ELECTION_IDENTITY: options.identity ?? 'solo',
    SETTEE_LEASE_DURATION: '3s',
    SETTEE_LEASE_RENEW_DEADLINE: '1500ms',
    SETTEE_LEASE_RETRY_PERIOD: '300ms',
    SETTEE_ENDPOINT_TEMPLATE: 'http://127.0.0.1:8080/db/{namespace}/{name}',
    ...UNLIMITED_FREE_INSTANCES,
    ...options.env,
  });
  return startOperator({
    config,
    kubeConfig: plane.kubeConfig,
    logger: createSilentLogger(),
    controllers: [couchInstanceController],
  });
}

/** The value of one sample of a metric on the operator's /metrics. */
export async function metricValue(operator: RunningOperator, sample: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${operator.healthPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

/** The operator and kubelet stand-in of a suite that runs instances through to their pods. */
export interface SuitePlatform {
  /** The running operator (after beforeAll). */
  operator(): RunningOperator;
}

/**
 * Starts a kubelet stand-in and an operator for the suite's namespace before its tests and stops
 * them after (the operator first, so nothing reconciles against a gone kubelet): the set-up every
 * suite that needs real pods shares.
 */
export function useSuitePlatform(
  namespace: { readonly name: string },
  options: { env?: Record<string, string> } = {},
): SuitePlatform {
  let operator: RunningOperator | undefined;
  let kubelet: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    kubelet = await startTestKubelet(namespace.name);
    operator = await startTestOperator({ namespace: namespace.name, ...options });
  });
  afterAll(async () => {
    await operator?.stop();
    await kubelet?.stop();
  });
  return {
    operator() {
      if (!operator) throw new Error('the suite platform starts in beforeAll');
      return operator;
    },
  };
}
