import type { V1Container, V1Pod, V1PodCondition, V1StatefulSet } from '@kubernetes/client-node';
import { DEFAULT_LOCAL_NODES } from './node-object.js';

/** The node the stand-in binds the pods it creates to (the node agent registers it). */
export const LOCAL_NODE_NAME = DEFAULT_LOCAL_NODES[0]?.name ?? 'settee-local';
/** Every engine listens on loopback: the "pod IP" of the local platform. */
export const LOCAL_POD_IP = '127.0.0.1';

export function podName(statefulSet: V1StatefulSet, ordinal: number): string {
  return `${statefulSet.metadata?.name ?? ''}-${ordinal}`;
}

/**
 * The pod the StatefulSet controller would create from the template: its labels, its spec, a
 * volume per claim template, owned by the StatefulSet. One deviation, because every engine shares
 * 127.0.0.1: the container port is the engine's own port instead of the template's.
 */
export function buildPod(statefulSet: V1StatefulSet, options: { ordinal: number; port: number }): V1Pod {
  const name = podName(statefulSet, options.ordinal);
  const template = statefulSet.spec?.template;
  const spec = template?.spec ?? { containers: [] };
  const claimVolumes = (statefulSet.spec?.volumeClaimTemplates ?? []).map((claim) => ({
    name: claim.metadata?.name ?? '',
    persistentVolumeClaim: { claimName: `${claim.metadata?.name ?? ''}-${name}` },
  }));
  let portAssigned = false;
  const containers = spec.containers.map((container) => ({
    ...container,
    ports: container.ports?.map((port) => {
      if (portAssigned || (port.protocol ?? 'TCP') !== 'TCP') return port;
      portAssigned = true;
      return { ...port, containerPort: options.port };
    }),
  }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: statefulSet.metadata?.namespace,
      labels: { ...template?.metadata?.labels, 'statefulset.kubernetes.io/pod-name': name },
      annotations: template?.metadata?.annotations,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: statefulSet.metadata?.name ?? '',
          uid: statefulSet.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      ...spec,
      containers,
      volumes: [...(spec.volumes ?? []), ...claimVolumes],
      hostname: name,
      subdomain: statefulSet.spec?.serviceName,
      nodeName: LOCAL_NODE_NAME,
    },
  };
}

/** The container port the stand-in gave the pod (the engine's port). */
export function podPort(pod: V1Pod): number | undefined {
  return pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => (p.protocol ?? 'TCP') === 'TCP')
    ?.containerPort;
}

/** The status a kubelet reports: running with an IP from the start, and Ready or not (see probe-schedule.ts). */
export function buildRunningPodStatus(options: {
  containers: readonly V1Container[];
  ready: boolean;
  startTime: Date;
  now: Date;
}): V1Pod['status'] {
  const condition = (type: string, status: boolean): V1PodCondition => ({
    type,
    status: status ? 'True' : 'False',
    lastTransitionTime: options.now,
  });
  return {
    phase: 'Running',
    hostIP: LOCAL_POD_IP,
    podIP: LOCAL_POD_IP,
    podIPs: [{ ip: LOCAL_POD_IP }],
    startTime: options.startTime,
    conditions: [
      condition('PodScheduled', true),
      condition('Initialized', true),
      condition('ContainersReady', options.ready),
      condition('Ready', options.ready),
    ],
    containerStatuses: options.containers.map((container) => ({
      name: container.name,
      image: container.image ?? '',
      imageID: '',
      ready: options.ready,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: options.startTime } },
    })),
  };
}
