import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
} from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { callKube, isAlreadyExists, isNotFound } from '../../kube/errors.js';
import { formatMicroTime } from '../../kube/micro-time.js';
import { errorMessage } from '../../observability/logger.js';
import {
  buildNode,
  buildNodeLease,
  buildNodeStatus,
  NODE_LEASE_NAMESPACE,
  type LocalNodeSpec,
} from './node-object.js';

export interface NodeAgentOptions {
  kubeConfig: KubeConfig;
  nodes: readonly LocalNodeSpec[];
  logger: Logger;
  /** The version the nodes report (the control plane's release). */
  kubeletVersion?: string;
  /** The kubelet's defaults: the Lease every 10 s, the status (heartbeat) every minute. */
  leaseRenewMs?: number;
  statusReportMs?: number;
}

export interface NodeAgent {
  readonly nodes: readonly LocalNodeSpec[];
  /** Stops the heartbeats; with `deregister`, deletes the Node objects too (their pods go with them). */
  stop(options?: { deregister?: boolean }): Promise<void>;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const LEASE_API = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' } as const;
export const DEFAULT_KUBELET_VERSION = 'v1.31.14';

/**
 * LOCAL PLATFORM AND TESTS ONLY: the kubelet's node part. Registers each node (labels with its
 * region), reports it Ready with its capacity, and renews its Lease in kube-node-lease every 10 s
 * and its status every minute, as a kubelet does, so that the real node lifecycle controller
 * keeps it Ready and untainted and the real scheduler places pods on it.
 */
export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const customObjects = options.kubeConfig.makeApiClient(CustomObjectsApi);
  const logger = options.logger.child({ part: 'node-agent' });
  const version = options.kubeletVersion ?? DEFAULT_KUBELET_VERSION;
  const registered = new Map<string, V1Node>();

  const reportStatus = async (spec: LocalNodeSpec): Promise<void> => {
    const status = buildNodeStatus(spec, new Date(), version);
    await callKube(() => core.patchNodeStatus({ name: spec.name, body: { status } }, mergePatch));
  };
  const renewLease = async (spec: LocalNodeSpec): Promise<void> => {
    const node = registered.get(spec.name);
    const lease = buildNodeLease(
      spec.name,
      new Date(),
      node?.metadata?.uid ? { uid: node.metadata.uid } : undefined,
    );
    const body = { ...lease, spec: { ...lease.spec, renewTime: formatMicroTime(new Date()) } };
    try {
      await callKube(() =>
        customObjects.patchNamespacedCustomObject(
          { ...LEASE_API, namespace: NODE_LEASE_NAMESPACE, name: spec.name, body: { spec: body.spec } },
          mergePatch,
        ),
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await callKube(() =>
        customObjects.createNamespacedCustomObject({ ...LEASE_API, namespace: NODE_LEASE_NAMESPACE, body }),
      );
    }
  };
  const register = async (spec: LocalNodeSpec): Promise<void> => {
    const desired = buildNode(spec);
    let node: V1Node;
    try {
      node = await callKube(() => core.createNode({ body: desired }));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // A node registered before (a restart of the stand-in) keeps its uid and takes today's labels.
      node = await callKube(() =>
        core.patchNode(
          { name: spec.name, body: { metadata: { labels: desired.metadata?.labels } } },
          mergePatch,
        ),
      );
    }
    registered.set(spec.name, node);
    await reportStatus(spec);
    await renewLease(spec);
  };

  await Promise.all(options.nodes.map(register));
  const every = (ms: number, what: string, fn: (spec: LocalNodeSpec) => Promise<void>): NodeJS.Timeout =>
    setInterval(() => {
      for (const spec of options.nodes) {
        fn(spec).catch((err: unknown) =>
          logger.warn(`${what} failed`, { node: spec.name, error: errorMessage(err) }),
        );
      }
    }, ms);
  const timers = [
    every(options.leaseRenewMs ?? 10_000, 'lease renewal', renewLease),
    every(options.statusReportMs ?? 60_000, 'status report', reportStatus),
  ];
  logger.info('nodes registered', { nodes: options.nodes.map((n) => `${n.name} (${n.region})`) });
  return {
    nodes: options.nodes,
    async stop(stopOptions = {}) {
      for (const timer of timers) clearInterval(timer);
      if (!stopOptions.deregister) return;
      await Promise.all(
        options.nodes.map((spec) =>
          callKube(() => core.deleteNode({ name: spec.name })).catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          }),
        ),
      );
    },
  };
}
