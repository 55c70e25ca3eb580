import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../local/control-plane.js';

/** A local control plane with `namespace` created, and a client configuration for it. */
export async function startBenchCluster(
  namespace: string,
): Promise<{ plane: ControlPlane; kubeConfig: KubeConfig }> {
  const plane = await startControlPlane();
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(plane.kubeconfigPath);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    return { plane, kubeConfig };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/** Creates the database `bench` with one small document, `bench/doc`, that the benchmarks read. */
export async function seedBenchDocument(databaseUrl: string, authorization: string): Promise<void> {
  await fetch(`${databaseUrl}/bench`, { method: 'PUT', headers: { Authorization: authorization } });
  await fetch(`${databaseUrl}/bench/doc`, {
    method: 'PUT',
    headers: { Authorization: authorization },
    body: '{"n":1}',
  });
}
