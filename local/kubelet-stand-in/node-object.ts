import crypto from 'node:crypto';
import os from 'node:os';
import type { V1Lease, V1Node, V1NodeCondition, V1NodeStatus } from '@kubernetes/client-node';

/** The label the scheduler matches region pinning against (the operator's node affinity). */
export const REGION_LABEL = 'topology.kubernetes.io/region';
/** Marks the nodes the kubelet stand-in registers and runs pods for. */
export const LOCAL_NODE_LABEL = 'settee.dev/local-kubelet';
/** Where kubelets keep their heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The kubelet's default: the node lifecycle controller's grace period is 40 s as well. */
export const NODE_LEASE_DURATION_SECONDS = 40;

/** One node the stand-in registers. */
export interface LocalNodeSpec {
  name: string;
  region: string;
  /** What the node offers the scheduler (default LOCAL_NODE_CAPACITY). */
  capacity?: NodeCapacity;
}

export interface NodeCapacity {
  cpu: string;
  memory: string;
  pods: string;
}

/**
 * What a local node offers the scheduler. The engines run as plain processes without cgroup
 * limits, so this is not the machine's size: it is sized so that a development machine can run
 * the hundreds of small instances the benchmarks create, as a cluster of several nodes would.
 */
export const LOCAL_NODE_CAPACITY: NodeCapacity = Object.freeze({ cpu: '64', memory: '256Gi', pods: '1000' });

/** `make run`'s one node. */
export const DEFAULT_LOCAL_NODES: readonly LocalNodeSpec[] = Object.freeze([
  { name: 'settee-local', region: 'local' },
]);

/** The Node object as a kubelet registers it (its status goes through the status subresource). */
export function buildNode(spec: LocalNodeSpec): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: {
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': goArch(),
        [REGION_LABEL]: spec.region,
        [LOCAL_NODE_LABEL]: 'true',
      },
    },
    spec: {},
  };
}

/** The node's status: Ready, no pressure, its capacity, and what it runs. */
export function buildNodeStatus(spec: LocalNodeSpec, now: Date, kubeletVersion: string): V1NodeStatus {
  const condition = (type: string, status: 'True' | 'False', reason: string, message: string) =>
    ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    }) satisfies V1NodeCondition;
  const capacity = spec.capacity ?? LOCAL_NODE_CAPACITY;
  return {
    capacity: { ...capacity },
    allocatable: { ...capacity },
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet stand-in is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: spec.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: {
      machineID: spec.name,
      systemUUID: spec.name,
      bootID: BOOT_ID,
      kernelVersion: os.release(),
      osImage: `${os.type()} (Settee kubelet stand-in)`,
      containerRuntimeVersion: 'settee-local://engine-process',
      kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: goArch(),
    },
  };
}

/** The heartbeat Lease a kubelet renews every 10 s in kube-node-lease. */
export function buildNodeLease(nodeName: string, now: Date, owner?: { uid: string }): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: nodeName,
      namespace: NODE_LEASE_NAMESPACE,
      ...(owner
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: owner.uid }] }
        : {}),
    },
    spec: {
      holderIdentity: nodeName,
      leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
      renewTime: now,
    },
  };
}

/** Changes with each start of the stand-in, as a machine's boot id does with each boot. */
const BOOT_ID = crypto.randomUUID();

function goArch(): string {
  const arch = os.arch();
  return arch === 'x64' ? 'amd64' : arch === 'ia32' ? '386' : arch;
}
