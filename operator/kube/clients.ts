import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
} from '@kubernetes/client-node';

export type { KubeConfig };

/**
 * The kubeconfig from `kubeconfigPath` when given, else client-node's default order: the
 * KUBECONFIG variable, ~/.kube/config, then the in-cluster service account.
 */
export function loadKubeConfig(options: { kubeconfigPath?: string | undefined } = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (options.kubeconfigPath) kubeConfig.loadFromFile(options.kubeconfigPath);
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster())
    throw new Error('no Kubernetes cluster configured (KUBECONFIG or in-cluster)');
  return kubeConfig;
}

/** Every API client the operator uses, made once from one kubeconfig. */
export interface KubeClients {
  kubeConfig: KubeConfig;
  /** Generic client: server-side apply through `applyObject` (apply.ts). */
  objects: KubernetesObjectApi;
  core: CoreV1Api;
  apps: AppsV1Api;
  /** Custom resources, including their status subresource. */
  customObjects: CustomObjectsApi;
  coordination: CoordinationV1Api;
}

export function makeKubeClients(kubeConfig: KubeConfig): KubeClients {
  return {
    kubeConfig,
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    customObjects: kubeConfig.makeApiClient(CustomObjectsApi),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
  };
}
