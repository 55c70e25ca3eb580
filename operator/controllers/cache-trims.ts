import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { trimKey, type ObjectTrim, type ObjectTrims } from '../../kube/object-trim.js';

/**
 * Of an instance's pod the controllers read its node (pod-scheduling.ts, not-ready-cause.ts), its
 * containers' ports (pod-address.ts), its status and metadata; the rest of the spec (volumes,
 * environment, probes, resources, security context), about half of a pod, is left out.
 */
export const trimPod: ObjectTrim = (object) => {
  const pod = object as V1Pod;
  const spec = pod.spec;
  if (!spec) return;
  pod.spec = {
    ...(spec.nodeName === undefined ? {} : { nodeName: spec.nodeName }),
    containers: spec.containers.map(({ name, ports }) => (ports ? { name, ports } : { name })),
  };
};

/**
 * Of an instance's StatefulSet the controllers read its metadata (what was applied, by whom), its
 * status (replicas, readyReplicas) and its volume claim template (the data volume's size and
 * class: statefulset.ts's claimShapeOf); its pod template, most of it, is left out.
 */
export const trimStatefulSet: ObjectTrim = (object) => {
  const statefulSet = object as V1StatefulSet;
  const spec = statefulSet.spec;
  if (!spec) return;
  const { template: _template, ...rest } = spec;
  statefulSet.spec = rest as V1StatefulSet['spec'];
};

/** The operator's trims by kind (InformerFactory and Informer.trim); kinds not named keep their fields. */
export const OPERATOR_CACHE_TRIMS: ObjectTrims = new Map([
  [trimKey({ apiVersion: 'v1', kind: 'Pod' }), trimPod],
  [trimKey({ apiVersion: 'apps/v1', kind: 'StatefulSet' }), trimStatefulSet],
]);
