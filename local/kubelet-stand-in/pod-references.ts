import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';

/** Where a kubelet finds what a pod references: its watch caches. */
export interface PodReferences {
  secret(ref: { namespace: string; name: string }): V1Secret | undefined;
  configMap(ref: { namespace: string; name: string }): V1ConfigMap | undefined;
}

/** Something the pod references is not there (yet): the pod waits with CreateContainerConfigError. */
export class MissingEngineInputError extends Error {
  readonly code = 'MISSING_ENGINE_INPUT';
  constructor(message: string) {
    super(message);
    this.name = 'MissingEngineInputError';
  }
}
