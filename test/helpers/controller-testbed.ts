import { CoreV1Api, type KubernetesObject, type V1ConfigMap } from '@kubernetes/client-node';
import { InformerFactory } from '../../kube/informer-factory.js';
import type { Informer } from '../../kube/informer.js';
import { createSilentLogger } from '../../observability/logger.js';
import { createOperatorMetrics } from '../../observability/metrics.js';
import { Controller, type WatchSource } from '../../kube/controller-runtime/controller.js';
import { ownerKeys, ownKey, type KeyMapper } from '../../kube/controller-runtime/key-mappers.js';
import type { ObjectKey } from '../../kube/controller-runtime/object-key.js';
import { isSpecOrMetadataChange } from '../../kube/controller-runtime/predicates.js';
import {
  DONE,
  type ReconcileContext,
  type ReconcileResult,
} from '../../kube/controller-runtime/reconciler.js';
import { testControlPlane } from './kube.js';

/**
 * A change through the API server, its watch event and the reconcile it queues: well under a second
 * on a quiet machine, seconds when etcd and the API server share a loaded CI machine's two cores.
 */
export const ROUND_TRIP_MS = 15_000;

type Behaviour = (key: ObjectKey, ctx: ReconcileContext, call: number) => Promise<ReconcileResult>;

/** A reconciler whose behaviour each test sets, recording every call. */
export class RecordingReconciler {
  readonly calls: { key: ObjectKey; at: number; failures: number }[] = [];
  readonly inFlight = new Set<ObjectKey>();
  overlaps = 0;
  behaviour: Behaviour = async () => DONE;

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    if (this.inFlight.has(key)) this.overlaps += 1;
    this.inFlight.add(key);
    const call = this.calls.filter((c) => c.key === key).length;
    this.calls.push({ key, at: Date.now(), failures: ctx.failures });
    try {
      return await this.behaviour(key, ctx, call);
    } finally {
      this.inFlight.delete(key);
    }
  }

  callsFor(key: ObjectKey) {
    return this.calls.filter((c) => c.key === key);
  }
}

export interface ControllerTestbedOptions {
  namespace: string;
  /** Names this test's objects (`<group>-<name>`) and selects its parent ConfigMaps (label test=<group>). */
  group: string;
  /** The owned Secrets' watch source (default: each maps to its owner, none is an own write). */
  childSource?: (children: Informer<KubernetesObject>, toOwner: KeyMapper) => WatchSource;
  /** Every parent reconciled again each period (default 0: never). */
  resyncPeriodMs?: number;
}

/**
 * A Controller over real informers: parent ConfigMaps (primary) and the Secrets labelled with their
 * owner's name (settee.dev/instance), reconciled by a RecordingReconciler. Not started: run() starts it.
 */
export function controllerTestbed(options: ControllerTestbedOptions) {
  const { namespace, group } = options;
  const prefix = `${group}-`;
  const core = () => testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  const reconciler = new RecordingReconciler();
  const metrics = createOperatorMetrics({ defaultMetrics: false });
  const informers = new InformerFactory({
    kubeConfig: testControlPlane().kubeConfig,
    namespace,
    logger: createSilentLogger(),
  });
  const parentInformer = informers.informerFor<V1ConfigMap>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    labelSelector: `test=${group}`,
  });
  const children = informers.informerFor<KubernetesObject>({
    apiVersion: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    labelSelector: 'settee.dev/instance',
  });
  const toOwner = ownerKeys({ apiVersion: 'v1', kind: 'ConfigMap' });
  const controller = new Controller({
    name: 'test',
    reconciler,
    primary: parentInformer,
    watches: [
      { informer: parentInformer, toKeys: ownKey, updatePredicate: isSpecOrMetadataChange },
      options.childSource?.(children, toOwner) ?? { informer: children, toKeys: toOwner },
    ],
    workers: 4,
    resyncPeriodMs: options.resyncPeriodMs ?? 0,
    // The cap is far above the first delays (100, 200, 400 ms) so that a key that was not
    // forgotten after success would wait 800 ms, far from the base 100 ms (a 700 ms margin for a late timer).
    backoff: { baseMs: 100, maxMs: 5_000 },
    logger: createSilentLogger(),
    metrics,
  });
  return {
    core,
    reconciler,
    metrics,
    controller,
    parentInformer,
    children,
    group,
    prefix,
    key: (name: string) => `${namespace}/${prefix}${name}`,
    /** A parent ConfigMap of this test. */
    parent: (name: string, data: Record<string, string> = { v: '1' }) =>
      core().createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: prefix + name, labels: { test: group } }, data },
      }),
    annotate: (name: string, value: string) =>
      core().patchNamespacedConfigMap({
        namespace,
        name: prefix + name,
        body: [{ op: 'add', path: '/metadata/annotations', value: { touch: value } }],
      }),
    async run(): Promise<void> {
      informers.startAll();
      await informers.waitForSync();
      controller.start();
    },
    async stop(): Promise<void> {
      await controller.stop();
      await informers.stopAll();
    },
  };
}

export type ControllerTestbed = ReturnType<typeof controllerTestbed>;
