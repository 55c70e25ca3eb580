import path from 'node:path';
import {
  PatchStrategy,
  setHeaderOptions,
  type AppsV1Api,
  type CoreV1Api,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { LABEL_INSTANCE } from '../../api/contract.js';
import { callKube, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer.js';
import { parseObjectKey, type ObjectKey } from '../../kube/controller-runtime/object-key.js';
import {
  DONE,
  requeueAfter,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../kube/controller-runtime/reconciler.js';
import { startCouchEngine, type CouchEngine, type CouchEngineKind } from '../couch-engine/index.js';
import { getFreePort } from '../ports.js';
import { isProcessAlive } from '../process.js';
import { readEngineInputs, type PodReferences } from './engine-inputs.js';
import { buildPod, buildRunningPodStatus, podName, podPort } from './pod.js';
import { readyReportedAt } from './probe-schedule.js';
import { buildStatefulSetStatus } from './statefulset-status.js';

export interface EngineReconcilerOptions {
  statefulSets: Informer<V1StatefulSet>;
  pods: Informer<V1Pod>;
  /** The Secrets and ConfigMaps pods reference, from watch caches. */
  references: PodReferences;
  core: CoreV1Api;
  apps: AppsV1Api;
  /** Each StatefulSet's data lives in `<dataRoot>/<namespace>/<name>` and is kept at 0 replicas. */
  dataRoot: string;
  /** Default: the engine helper's default (Apache CouchDB when SETTEE_COUCHDB_BIN is set). */
  engineKind?: CouchEngineKind;
}

interface RunningPod {
  engine: CouchEngine;
  startTime: Date;
  /** Epoch ms: when a kubelet's probe would first find it ready (probe-schedule.ts). */
  readyAt: number;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The StatefulSet controller's and the kubelet's part, for one StatefulSet per key. At replicas 1:
 * start a CouchDB engine as pod 0, create the pod from the template and report it Running with its
 * IP while the engine starts (not ready), report it Ready at the first probe tick after the engine
 * answers /_up (as a kubelet would), and write the StatefulSet's status. At 0: mark the pod terminating, stop the engine (its data folder
 * stays), remove the pod.
 */
export class EngineReconciler implements Reconciler {
  private readonly running = new Map<ObjectKey, RunningPod>();

  constructor(private readonly options: EngineReconcilerOptions) {}

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const ref = parseObjectKey(key);
    const statefulSet = this.options.statefulSets.get(ref);
    const namespace = ref.namespace ?? '';
    const pod0 = `${ref.name}-0`;
    let running = this.running.get(key);
    if (running && !isProcessAlive(running.engine.pid)) {
      ctx.logger.warn('engine exited on its own; starting it again', { pid: running.engine.pid });
      this.running.delete(key);
      running = undefined;
    }
    const wanted =
      statefulSet !== undefined &&
      !statefulSet.metadata?.deletionTimestamp &&
      (statefulSet.spec?.replicas ?? 1) > 0;
    if (!wanted) {
      await this.terminate(key, namespace, pod0, running);
      if (statefulSet) await this.writeStatus(statefulSet, 0, 0);
      if (running) ctx.logger.info('engine stopped; data kept');
      return DONE;
    }
    if (!running) running = await this.startPod(key, statefulSet, ctx);
    const untilReady = running.readyAt - Date.now();
    if (untilReady > 0) return requeueAfter(untilReady);
    if (!this.reportedReady(statefulSet, pod0)) {
      await this.writePodStatus(statefulSet, { ready: true, startTime: running.startTime });
      await this.writeStatus(statefulSet, 1, 1);
    }
    return DONE;
  }

  /** Stops every engine (the platform is going down); data and pod objects stay, as on a node reboot. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running.values()].map((pod) => pod.engine.stop()));
    this.running.clear();
  }

  private async startPod(
    key: ObjectKey,
    statefulSet: V1StatefulSet,
    ctx: ReconcileContext,
  ): Promise<RunningPod> {
    const { namespace = '', name = '' } = statefulSet.metadata ?? {};
    const instance = statefulSet.metadata?.labels?.[LABEL_INSTANCE] ?? name;
    const inputs = readEngineInputs(this.options.references, statefulSet, instance);
    const pod0 = podName(statefulSet, 0);
    // A pod left from before (this stand-in restarted) keeps its port; a new one gets a free port.
    const existing = this.options.pods.get({ namespace, name: pod0 });
    const kept = existing && !existing.metadata?.deletionTimestamp ? podPort(existing) : undefined;
    const port = kept ?? (await getFreePort());
    const startTime = new Date();
    const starting = startCouchEngine({
      dataDir: path.join(this.options.dataRoot, namespace, name),
      admin: inputs.admin,
      uuid: inputs.uuid,
      port,
      name: key,
      ...(this.options.engineKind ? { kind: this.options.engineKind } : {}),
    });
    // The engine starts first; the pod and its IP are reported while it does, not before.
    const reported = (async () => {
      if (kept === undefined) {
        if (existing) await this.deletePod(namespace, pod0, 0);
        const body = buildPod(statefulSet, { ordinal: 0, port });
        await callKube(() => this.options.core.createNamespacedPod({ namespace, body }));
      }
      await Promise.all([
        this.writePodStatus(statefulSet, { ready: false, startTime }),
        this.writeStatus(statefulSet, 1, 0),
      ]);
    })();
    try {
      const [engine] = await Promise.all([starting, reported]);
      const answeredAt = Date.now();
      ctx.logger.info('engine up', { port, startMs: answeredAt - startTime.getTime(), kind: engine.kind });
      const container = statefulSet.spec?.template.spec?.containers[0];
      const readyAt = readyReportedAt(container, startTime.getTime(), answeredAt);
      const running: RunningPod = { engine, startTime, readyAt };
      this.running.set(key, running);
      return running;
    } catch (err) {
      // Its port may have been taken meanwhile: a new pod gets a new one on the next attempt.
      await starting.then((engine) => engine.stop()).catch(() => undefined);
      await reported.catch(() => undefined);
      await this.deletePod(namespace, pod0, 0).catch(() => undefined);
      throw err;
    }
  }

  private async terminate(
    key: ObjectKey,
    namespace: string,
    name: string,
    running: RunningPod | undefined,
  ): Promise<void> {
    // As a kubelet does: the pod is marked terminating first (clients stop using it), then stopped.
    if (running) await this.deletePod(namespace, name, 30);
    await running?.engine.stop();
    this.running.delete(key);
    await this.deletePod(namespace, name, 0);
  }

  private async deletePod(namespace: string, name: string, gracePeriodSeconds: number): Promise<void> {
    try {
      await callKube(() => this.options.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Whether the pod and the StatefulSet already say ready, as far as the watch caches know. */
  private reportedReady(statefulSet: V1StatefulSet, pod0: string): boolean {
    const pod = this.options.pods.get({ namespace: statefulSet.metadata?.namespace ?? '', name: pod0 });
    const podReady = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    return podReady && statefulSet.status?.readyReplicas === 1;
  }

  /** The kubelet's part: pod 0 runs, with its IP, and is ready or not. */
  private async writePodStatus(
    statefulSet: V1StatefulSet,
    options: { ready: boolean; startTime: Date },
  ): Promise<void> {
    const namespace = statefulSet.metadata?.namespace ?? '';
    const name = podName(statefulSet, 0);
    const containers = statefulSet.spec?.template.spec?.containers ?? [];
    const status = buildRunningPodStatus({ ...options, containers, now: new Date() });
    await callKube(() =>
      this.options.core.patchNamespacedPodStatus({ name, namespace, body: { status } }, mergePatch),
    );
  }

  /** The StatefulSet controller's part: how many pods exist and are ready. */
  private async writeStatus(statefulSet: V1StatefulSet, replicas: number, ready: number): Promise<void> {
    const { namespace = '', name = '' } = statefulSet.metadata ?? {};
    const status = buildStatefulSetStatus(statefulSet, { replicas, ready });
    await callKube(() =>
      this.options.apps.patchNamespacedStatefulSetStatus({ name, namespace, body: { status } }, mergePatch),
    );
  }
}
