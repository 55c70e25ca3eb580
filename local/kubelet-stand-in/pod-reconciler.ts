import fs from 'node:fs/promises';
import path from 'node:path';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { callKube, isConflict, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer.js';
import { parseObjectKey, type ObjectKey } from '../../kube/controller-runtime/object-key.js';
import {
  DONE,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../../kube/controller-runtime/reconciler.js';
import type { PodWorker } from './pod-worker.js';

export interface PodReconcilerOptions {
  pods: Informer<V1Pod>;
  core: CoreV1Api;
  /** The nodes whose pods this stand-in runs. */
  nodeNames: ReadonlySet<string>;
  /** Where pods without a claim for their data keep it while they exist (`<root>/<pod uid>`). */
  podScratchRoot: string;
  createWorker(pod: V1Pod): PodWorker;
}

/** A kubelet's default when a pod's deletion names no grace period. */
const DEFAULT_GRACE_SECONDS = 30;

/**
 * The kubelet's pod lifecycle for the pods bound to the stand-in's nodes, one key per pod: a pod
 * gets a worker (pod-worker.ts) that runs it; a pod being deleted is stopped within its grace
 * period, then removed for good (the kubelet's final delete, with the pod's uid as precondition);
 * a pod replaced by a new one of the same name (the StatefulSet controller does that) is stopped
 * first.
 */
export class PodReconciler implements Reconciler {
  private readonly workers = new Map<ObjectKey, PodWorker>();

  constructor(private readonly options: PodReconcilerOptions) {}

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const ref = parseObjectKey(key);
    const pod = this.options.pods.get(ref);
    let worker = this.workers.get(key);
    if (worker && (!pod || pod.metadata?.uid !== worker.uid)) {
      await worker.terminate(0);
      this.workers.delete(key);
      await this.removeScratch(worker.uid);
      worker = undefined;
    }
    if (!pod || !this.options.nodeNames.has(pod.spec?.nodeName ?? '')) return DONE;
    if (pod.metadata?.deletionTimestamp) {
      const graceSeconds = pod.metadata.deletionGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
      if (worker) {
        await worker.terminate(graceSeconds * 1000);
        this.workers.delete(key);
      }
      await this.removeScratch(pod.metadata.uid ?? '');
      await this.finalDelete(pod);
      ctx.logger.info('pod stopped and removed', { graceSeconds });
      return DONE;
    }
    const phase = pod.status?.phase;
    if (worker) worker.update(pod);
    else if (phase !== 'Succeeded' && phase !== 'Failed') {
      worker = this.options.createWorker(pod);
      this.workers.set(key, worker);
      worker.start();
    }
    return DONE;
  }

  /** Stops every container (the stand-in is going down); pods stay, as on a node reboot. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.workers.values()].map((worker) => worker.terminate(5_000)));
    this.workers.clear();
  }

  /** A pod without a claim for its data gets a scratch folder (an emptyDir), gone with the pod. */
  scratchFolder(pod: V1Pod): string {
    return path.join(this.options.podScratchRoot, pod.metadata?.uid ?? 'unknown');
  }

  private async removeScratch(uid: string): Promise<void> {
    if (uid) await fs.rm(path.join(this.options.podScratchRoot, uid), { recursive: true, force: true });
  }

  private async finalDelete(pod: V1Pod): Promise<void> {
    const { namespace = '', name = '', uid } = pod.metadata ?? {};
    try {
      await callKube(() =>
        this.options.core.deleteNamespacedPod({
          namespace,
          name,
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid } },
        }),
      );
    } catch (err) {
      // Gone already, or a new pod of that name took its place.
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }
}
