import { DEFAULT_LOCAL_NODES, type LocalNodeSpec } from '../../local/kubelet-stand-in/node-object.js';

/** The environment variable through which global-setup hands each jest worker its control plane. */
export const CONTROL_PLANES_ENV = 'SETTEE_TEST_CONTROL_PLANES';

export interface TestControlPlaneInfo {
  server: string;
  kubeconfigPath: string;
  kubectl: string;
  helm: string;
}

/** The nodes the kubelet stand-in registers in every test control plane. */
export const TEST_NODES: readonly LocalNodeSpec[] = DEFAULT_LOCAL_NODES;
