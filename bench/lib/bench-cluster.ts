import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../local/control-plane.js';
import { startNodeAgent } from '../../local/kubelet-stand-in/node-agent.js';
import { createSilentLogger } from '../../observability/logger.js';
import { TEST_NODES } from '../../test/helpers/control-plane-env.js';

/**
 * A local control plane with `namespace` created and a client configuration for it. With
 * `testNodes`, the tests' nodes are registered and kept Ready, as the tests' global setup does:
 * the real pod garbage collector deletes pods bound to a node that does not exist, which the
 * gateway harness's stand-in pods (setInstancePod) are. Benchmarks that run a kubelet stand-in
 * leave it off (it registers its own nodes; pods scheduled onto these would never run). Stopping
 * the plane stops the nodes' agent too. `apiserverArgs` go after the API server's own flags.
 */
export async function startBenchCluster(
  namespace: string,
  options: { testNodes?: boolean; apiserverArgs?: readonly string[] } = {},
): Promise<{ plane: ControlPlane; kubeConfig: KubeConfig }> {
  const started = await startControlPlane({ apiserverArgs: options.apiserverArgs });
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(started.kubeconfigPath);
    const nodes = options.testNodes
      ? await startNodeAgent({ kubeConfig, nodes: TEST_NODES, logger: createSilentLogger() })
      : undefined;
    const plane: ControlPlane = {
      ...started,
      stop: async () => {
        await nodes?.stop();
        await started.stop();
      },
    };
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    return { plane, kubeConfig };
  } catch (err) {
    await started.stop();
    throw err;
  }
}
/** Creates the database `bench` with one small document, `bench/doc`, that the benchmarks read. */
export async function seedBenchDocument(databaseUrl: string, authorization: string): Promise<void> {
  const headers = { Authorization: authorization };
  const database = await fetch(`${databaseUrl}/bench`, { method: 'PUT', headers });
  // 412: an earlier run of the same bench already made it.
  if (database.status !== 201 && database.status !== 412) {
    throw new Error(`creating the bench database answered ${database.status}: ${await database.text()}`);
  }
  const doc = await fetch(`${databaseUrl}/bench/doc`, { method: 'PUT', headers, body: '{"n":1}' });
  if (doc.status !== 201 && doc.status !== 409) {
    throw new Error(`writing bench/doc answered ${doc.status}: ${await doc.text()}`);
  }
}
