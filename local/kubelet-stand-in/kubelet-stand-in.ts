import fs from 'node:fs/promises';
import path from 'node:path';
import type {
  KubeConfig,
  V1ConfigMap,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1StorageClass,
} from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { LABEL_INSTANCE } from '../../api/contract.js';
import { makeKubeClients } from '../../kube/clients.js';
import { KubeEventRecorder } from '../../kube/events.js';
import { InformerFactory } from '../../kube/informer-factory.js';
import { Controller } from '../../kube/controller-runtime/controller.js';
import { ownKey } from '../../kube/controller-runtime/key-mappers.js';
import { objectKeyOf } from '../../kube/controller-runtime/object-key.js';
import { anyOf, deletionChanged } from '../../kube/controller-runtime/predicates.js';
import type { CouchEngineKind } from '../couch-engine/index.js';
import { ProcessLauncher } from '../process-launcher.js';
import { IMAGE_DATA } from '../couch-engine/image-layout.js';
import { engineKindFor } from './engine-kind-for.js';
import { readEngineInputs, type PodReferences } from './engine-inputs.js';
import { claimFolder, LOCAL_VOLUME_LABEL, LocalVolumes } from './local-volumes.js';
import { startNodeAgent } from './node-agent.js';
import type { LocalNodeSpec } from './node-object.js';
import { PodReconciler } from './pod-reconciler.js';
import { PodWorker } from './pod-worker.js';

export interface KubeletStandInOptions {
  kubeConfig: KubeConfig;
  /** Only this namespace's pods and claims (tests); undefined = every namespace. */
  namespace?: string | undefined;
  /** Volumes are folders here (`pvc-<claim uid>`); pods without a claim get `pods/<pod uid>`. */
  dataRoot: string;
  logger: Logger;
  /** Every pod on this engine (default: engineKindFor, by image and the release available). */
  engineKind?: CouchEngineKind;
  /** The nodes whose pods it runs. */
  nodes: readonly LocalNodeSpec[];
  /**
   * Also register those nodes and keep them Ready (make run). Tests leave it off: their global
   * setup keeps each control plane's nodes for the whole run, while stand-ins come and go per suite.
   */
  registerNodes?: boolean;
  /** How often every pod and claim is looked at again (default 10 s). */
  resyncPeriodMs?: number;
  /** Restart delays after a container ends (default: the kubelet's 10 s doubling to 5 min). */
  restartBackoff?: { baseMs: number; maxMs: number };
}

export interface KubeletStandIn {
  /** Stops watching and stops every engine; pods, volumes and their folders stay. */
  stop(): Promise<void>;
}

/**
 * LOCAL PLATFORM AND TESTS ONLY: a stand-in for the kubelet, which a machine without a container
 * runtime lacks, and for the local StorageClass's provisioner. The real kube-scheduler binds pods to
 * its nodes and the real StatefulSet controller makes them; it runs each bound pod's CouchDB
 * container as a local engine process on an address of its own (pod-worker.ts), reports pod status
 * and Events as a kubelet does, and binds, grows and reclaims PersistentVolumes as folders under
 * `dataRoot` (local-volumes.ts). There are no Endpoints or EndpointSlices: the API server refuses
 * loopback addresses in them, so the local control plane runs no endpoint controllers
 * (control-plane-components.ts); the gateway reads pods.
 */
export async function startKubeletStandIn(options: KubeletStandInOptions): Promise<KubeletStandIn> {
  const logger = options.logger.child({ part: 'kubelet-stand-in' });
  const clients = makeKubeClients(options.kubeConfig);
  const dataRoot = path.resolve(options.dataRoot);
  await fs.mkdir(path.join(dataRoot, 'pods'), { recursive: true });
  const informers = new InformerFactory({
    kubeConfig: options.kubeConfig,
    namespace: options.namespace,
    logger,
  });
  const clusterInformers = new InformerFactory({ kubeConfig: options.kubeConfig, logger });
  const pods = informers.informerFor<V1Pod>({ apiVersion: 'v1', kind: 'Pod', plural: 'pods' });
  // What a kubelet watches besides its pods: the Secrets and ConfigMaps they reference.
  const byInstance = (kind: string, plural: string) => ({
    apiVersion: 'v1',
    kind,
    plural,
    labelSelector: LABEL_INSTANCE,
  });
  const secrets = informers.informerFor<V1Secret>(byInstance('Secret', 'secrets'));
  const configMaps = informers.informerFor<V1ConfigMap>(byInstance('ConfigMap', 'configmaps'));
  const claims = informers.informerFor<V1PersistentVolumeClaim>({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    plural: 'persistentvolumeclaims',
  });
  const volumes = clusterInformers.informerFor<V1PersistentVolume>({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    plural: 'persistentvolumes',
    labelSelector: LOCAL_VOLUME_LABEL,
  });
  const storageClasses = clusterInformers.informerFor<V1StorageClass>({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    plural: 'storageclasses',
  });
  const references: PodReferences = {
    secret: (ref) => secrets.get(ref),
    configMap: (ref) => configMaps.get(ref),
  };
  const events = new KubeEventRecorder({
    core: clients.core,
    component: 'kubelet',
    instance: options.nodes.map((n) => n.name).join(','),
    logger,
  });
  const addresses = new Set<string>();
  const podReconciler: PodReconciler = new PodReconciler({
    pods,
    core: clients.core,
    nodeNames: new Set(options.nodes.map((n) => n.name)),
    podScratchRoot: path.join(dataRoot, 'pods'),
    createWorker: (pod) =>
      new PodWorker(pod, {
        core: clients.core,
        events,
        logger,
        engineKind: (p) => options.engineKind ?? engineKindFor(p),
        addresses,
        startProcess: (start) => launcher.start(start),
        ...(options.restartBackoff ? { restartBackoff: options.restartBackoff } : {}),
        engineInputs: (p, kind) =>
          readEngineInputs(references, p, { instance: p.metadata?.labels?.[LABEL_INSTANCE] ?? '', kind }),
        dataFolder: async (p) => {
          const claimName = dataClaimName(p);
          if (!claimName) {
            const folder = podReconciler.scratchFolder(p);
            await fs.mkdir(folder, { recursive: true });
            return { folder };
          }
          const bound = claimFolder(claims, volumes, {
            namespace: p.metadata?.namespace ?? '',
            name: claimName,
          });
          return 'folder' in bound ? { ...bound, claim: claimName } : bound;
        },
      }),
  });
  const podController = new Controller({
    name: 'kubelet-stand-in',
    reconciler: podReconciler,
    primary: pods,
    // Its own status writes change neither binding nor deletion, so they cause no reconcile.
    watches: [{ informer: pods, toKeys: ownKey, updatePredicate: anyOf(deletionChanged, nodeNameChanged) }],
    // Pods start in parallel: a wake must never queue behind another instance's start.
    workers: 16,
    resyncPeriodMs: options.resyncPeriodMs ?? 10_000,
    backoff: { baseMs: 200, maxMs: 10_000 },
    logger,
  });
  const volumeController = new Controller({
    name: 'local-volume-provisioner',
    reconciler: new LocalVolumes({
      claims,
      volumes,
      storageClasses,
      core: clients.core,
      root: dataRoot,
      namespace: options.namespace,
    }),
    primary: claims,
    watches: [
      { informer: claims, toKeys: ownKey },
      {
        informer: volumes,
        toKeys: (pv) => [`volume:${objectKeyOf(pv) ?? ''}` as ReturnType<typeof ownKey>[number]],
      },
    ],
    workers: 4,
    resyncPeriodMs: options.resyncPeriodMs ?? 10_000,
    backoff: { baseMs: 200, maxMs: 10_000 },
    logger,
  });
  const nodeAgent = options.registerNodes
    ? await startNodeAgent({ kubeConfig: options.kubeConfig, nodes: options.nodes, logger })
    : undefined;
  informers.startAll();
  clusterInformers.startAll();
  await Promise.all([informers.waitForSync(), clusterInformers.waitForSync()]);
  // A container's process is forked ahead of its start, off the wake's path (process-launcher.ts);
  // made here, once nothing can fail before stop() would close it.
  const launcher = new ProcessLauncher();
  volumeController.start();
  podController.start();
  logger.info('kubelet stand-in running', {
    namespace: options.namespace ?? '(all)',
    nodes: options.nodes.map((n) => n.name),
    dataRoot,
  });
  return {
    async stop() {
      await podController.stop();
      await volumeController.stop();
      await informers.stopAll();
      await clusterInformers.stopAll();
      await podReconciler.stopAll();
      launcher.close();
      await nodeAgent?.stop();
    },
  };
}

/**
 * The claim behind the volume the CouchDB container keeps its databases on (mounted where the image
 * keeps them), if any: that volume is the engine's data folder.
 */
function dataClaimName(pod: V1Pod): string | undefined {
  const mount = pod.spec?.containers[0]?.volumeMounts?.find((m) => m.mountPath === IMAGE_DATA);
  const volume = pod.spec?.volumes?.find((v) => v.name === mount?.name);
  return volume?.persistentVolumeClaim?.claimName;
}

function nodeNameChanged(previous: V1Pod | undefined, current: V1Pod): boolean {
  return previous?.spec?.nodeName !== current.spec?.nodeName;
}
