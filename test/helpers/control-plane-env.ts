/** The environment variable through which global-setup hands each jest worker its control plane. */
export const CONTROL_PLANES_ENV = 'SETTEE_TEST_CONTROL_PLANES';

export interface TestControlPlaneInfo {
  server: string;
  kubeconfigPath: string;
  kubectl: string;
  helm: string;
}
