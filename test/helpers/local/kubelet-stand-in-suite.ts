/**
 * The set-up the kubelet stand-in's suites share: a namespace with the admin Secret and the
 * ConfigMap that stand-in-statefulset.ts's StatefulSet references, a stand-in watching it with a
 * data root of its own, and the reads and waits on the StatefulSet's one pod.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { adminSecretName, LABEL_INSTANCE } from '../../../api/contract.js';
import {
  startKubeletStandIn,
  type KubeletStandIn,
} from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import { waitFor } from '../../../local/wait.js';
import { TEST_NODES } from '../control-plane-env.js';
import { testLogger } from '../test-logger.js';
import { testControlPlane, useTestNamespace } from '../kube.js';
import { admin, NAME, statefulSet, UUID } from './stand-in-statefulset.js';

/**
 * A pod's engine started (or restarted) by the stand-in, Ready: claim, scheduling by the real
 * scheduler, the engine process and its probes, seconds on a quiet machine and far more under CI load.
 */
export const ENGINE_START_MS = 60_000;
/** Status the stand-in or a controller writes, and the admin CouchDB hashes after it answers. */
const STATUS_MS = 20_000;
/** local/wait.ts's waitFor at 50 ms: the stand-in's status writes take milliseconds. */
export const until = <T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = STATUS_MS,
): Promise<T> => waitFor(what, check, { timeoutMs, intervalMs: 50 });

export interface StandInSuite {
  /** The test namespace the stand-in watches (set once the suite's beforeAll ran). */
  readonly namespace: string;
  /** The folder its volumes are made in. */
  readonly dataRoot: string;
  core(): CoreV1Api;
  apps(): AppsV1Api;
  createStatefulSet(replicas: number): Promise<void>;
  scale(replicas: number): Promise<void>;
  /** The StatefulSet's pod, or undefined when there is none. */
  readPod(): Promise<V1Pod | undefined>;
  /** The StatefulSet's pod once it is Ready. */
  readyPod(): Promise<V1Pod>;
}

/** Registers the suite's beforeAll/afterAll: call it at the top of a describe. */
export function useKubeletStandIn(): StandInSuite {
  const namespace = useTestNamespace('kubelet');
  let dataRoot = '';
  let standIn: KubeletStandIn | undefined;
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  const apps = () => testControlPlane().kubeConfig.makeApiClient(AppsV1Api);

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-kubelet-'));
    await core().createNamespacedSecret({
      namespace: namespace.name,
      body: {
        metadata: { name: adminSecretName(NAME), labels: { [LABEL_INSTANCE]: NAME } },
        stringData: { username: admin.username, password: admin.password },
      },
    });
    await core().createNamespacedConfigMap({
      namespace: namespace.name,
      body: {
        metadata: { name: `${NAME}-config`, labels: { [LABEL_INSTANCE]: NAME } },
        data: { 'settee.ini': `[couchdb]\nuuid = ${UUID}\nsingle_node = true\n` },
      },
    });
    standIn = await startKubeletStandIn({
      kubeConfig,
      namespace: namespace.name,
      dataRoot,
      nodes: TEST_NODES,
      // The BackOff Event is written only if the exit is handled within baseMs of it: 200 ms was
      // less than one stall of a loaded CI machine (no Event, the crash test failed). Seconds cost
      // the crash test one wait of baseMs, and it is the only one that restarts twice.
      restartBackoff: { baseMs: 4_000, maxMs: 8_000 },
      logger: testLogger('kubelet-stand-in'),
    });
  });

  afterAll(async () => {
    await standIn?.stop();
    if (dataRoot) await fs.rm(dataRoot, { recursive: true, force: true });
  });

  const readPod = () =>
    core()
      .readNamespacedPod({ name: `${NAME}-0`, namespace: namespace.name })
      .catch(() => undefined);

  return {
    get namespace() {
      return namespace.name;
    },
    get dataRoot() {
      return dataRoot;
    },
    core,
    apps,
    async createStatefulSet(replicas) {
      await apps().createNamespacedStatefulSet({ namespace: namespace.name, body: statefulSet(replicas) });
    },
    async scale(replicas) {
      await apps().patchNamespacedStatefulSet(
        { name: NAME, namespace: namespace.name, body: { spec: { replicas } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    },
    readPod,
    readyPod: () =>
      until(
        'the pod Ready',
        async () => {
          const current = await readPod();
          return current?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
            ? current
            : undefined;
        },
        ENGINE_START_MS,
      ),
  };
}
