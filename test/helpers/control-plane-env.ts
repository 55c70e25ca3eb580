import type { LocalNodeSpec } from '../../local/kubelet-stand-in/node-object.js';

/** The environment variable through which global-setup hands each jest worker its control plane. */
export const CONTROL_PLANES_ENV = 'SETTEE_TEST_CONTROL_PLANES';

export interface TestControlPlaneInfo {
  server: string;
  kubeconfigPath: string;
  kubectl: string;
  helm: string;
}

/**
 * The nodes of every test control plane, in two regions (region pinning lands on one of them);
 * global setup registers them and keeps them Ready, each suite's kubelet stand-in runs their pods.
 */
export const TEST_NODES: readonly LocalNodeSpec[] = Object.freeze([
  { name: 'settee-test-a', region: 'test-region-a' },
  { name: 'settee-test-b', region: 'test-region-b' },
]);
