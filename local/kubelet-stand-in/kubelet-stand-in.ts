import type { KubeConfig, V1ConfigMap, V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { LABEL_INSTANCE } from '../../api/contract.js';
import { makeKubeClients } from '../../kube/clients.js';
import { InformerFactory } from '../../kube/informer-factory.js';
import { Controller } from '../../kube/controller-runtime/controller.js';
import { ownKey } from '../../kube/controller-runtime/key-mappers.js';
import { anyOf, deletionChanged, generationChanged } from '../../kube/controller-runtime/predicates.js';
import type { CouchEngineKind } from '../couch-engine/index.js';
import { EngineReconciler } from './engine-reconciler.js';
import { startNodeAgent } from './node-agent.js';
import type { LocalNodeSpec } from './node-object.js';

export interface KubeletStandInOptions {
  kubeConfig: KubeConfig;
  /** Only this namespace's StatefulSets (tests); undefined = every namespace. */
  namespace?: string | undefined;
  dataRoot: string;
  logger: Logger;
  engineKind?: CouchEngineKind;
  /** How often every StatefulSet is looked at again, e.g. to restart an engine that died (default 10 s). */
  resyncPeriodMs?: number;
  /**
   * The nodes to register and keep Ready (make run). Tests leave it out: their global setup keeps
   * each control plane's nodes for the whole run, while stand-ins come and go per suite.
   */
  nodes?: readonly LocalNodeSpec[];
}

export interface KubeletStandIn {
  /** Stops watching and stops every engine; data folders stay. */
  stop(): Promise<void>;
}

/**
 * LOCAL PLATFORM AND TESTS ONLY: a stand-in for the kubelet and the StatefulSet controller, which a
 * machine without a cluster lacks. It runs one CouchDB engine per Settee StatefulSet at replicas 1
 * and reports addresses and readiness back through the Kubernetes API exactly where a cluster
 * would (the pod and its status, the StatefulSet's status), so the operator and the gateway run
 * their production code paths against it. EndpointSlices are not written: the API server refuses
 * loopback addresses in them, and the gateway reads pods.
 */
export async function startKubeletStandIn(options: KubeletStandInOptions): Promise<KubeletStandIn> {
  const logger = options.logger.child({ part: 'kubelet-stand-in' });
  const clients = makeKubeClients(options.kubeConfig);
  const informers = new InformerFactory({
    kubeConfig: options.kubeConfig,
    namespace: options.namespace,
    logger,
  });
  const statefulSets = informers.informerFor<V1StatefulSet>({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    plural: 'statefulsets',
    labelSelector: LABEL_INSTANCE,
  });
  // What a kubelet watches: its pods, and the Secrets and ConfigMaps they reference.
  const byInstance = (kind: string, plural: string) => ({
    apiVersion: 'v1',
    kind,
    plural,
    labelSelector: LABEL_INSTANCE,
  });
  const pods = informers.informerFor<V1Pod>(byInstance('Pod', 'pods'));
  const secrets = informers.informerFor<V1Secret>(byInstance('Secret', 'secrets'));
  const configMaps = informers.informerFor<V1ConfigMap>(byInstance('ConfigMap', 'configmaps'));
  const reconciler = new EngineReconciler({
    statefulSets,
    pods,
    references: { secret: (ref) => secrets.get(ref), configMap: (ref) => configMaps.get(ref) },
    core: clients.core,
    apps: clients.apps,
    dataRoot: options.dataRoot,
    ...(options.engineKind ? { engineKind: options.engineKind } : {}),
  });
  const controller = new Controller({
    name: 'kubelet-stand-in',
    reconciler,
    primary: statefulSets,
    // Its own status writes bump neither generation nor deletion, so they cause no reconcile.
    watches: [
      { informer: statefulSets, toKeys: ownKey, updatePredicate: anyOf(generationChanged, deletionChanged) },
    ],
    // Engines start in parallel: a wake must never queue behind another instance's start.
    workers: 16,
    resyncPeriodMs: options.resyncPeriodMs ?? 10_000,
    backoff: { baseMs: 200, maxMs: 10_000 },
    logger,
  });
  const nodeAgent = options.nodes
    ? await startNodeAgent({ kubeConfig: options.kubeConfig, nodes: options.nodes, logger })
    : undefined;
  informers.startAll();
  await informers.waitForSync();
  controller.start();
  logger.info('kubelet stand-in running', {
    namespace: options.namespace ?? '(all)',
    dataRoot: options.dataRoot,
  });
  return {
    async stop() {
      await controller.stop();
      await informers.stopAll();
      await reconciler.stopAll();
      await nodeAgent?.stop();
    },
  };
}
