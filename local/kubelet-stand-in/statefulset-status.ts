import type { V1StatefulSet, V1StatefulSetStatus } from '@kubernetes/client-node';

/**
 * The StatefulSet controller's part, which no test or local control plane runs: the status it
 * would report with `replicas` pods of which `ready` are ready.
 */
export function buildStatefulSetStatus(
  statefulSet: V1StatefulSet,
  pods: { replicas: number; ready: number },
): V1StatefulSetStatus {
  return {
    observedGeneration: statefulSet.metadata?.generation,
    replicas: pods.replicas,
    readyReplicas: pods.ready,
    availableReplicas: pods.ready,
    currentReplicas: pods.replicas,
    updatedReplicas: pods.replicas,
  };
}
