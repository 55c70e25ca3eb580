import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { COUCH_INSTANCE_KIND } from '../api/couch-instance.js';
import { QUEUE_BINDING_KIND } from '../api/queue-binding.js';
import { applyObject, makeObjectClient } from '../kube/apply.js';
import { provideLocalQueueDatabases } from './local-queue-databases.js';
import { provisionConsoleIdentity, provisionTenant } from './tenant-access.js';

export const DEMO_NAMESPACE = 'demo';
export const DEMO_SERVICE_ACCOUNT = 'demo-user';

export interface DemoTenant {
  namespace: string;
  username: string;
  /** File holding the demo user's bearer token (mode 0600), to paste into the console. */
  tokenFile: string;
  /** Stops the demo's own redis-server. */
  stop(): Promise<void>;
}

/**
 * `make run`'s demo tenant: namespace `demo`, ServiceAccount `demo-user` with the tenant Role there
 * only (local/tenant-access.ts), the free example instance and the example QueueBinding (on a
 * redis-server of its own) so the console has something to show, and the user's token in a file.
 */
export async function createDemoTenant(
  kubeConfig: KubeConfig,
  options: { stateDir: string; examples: KubernetesObject[] },
): Promise<DemoTenant> {
  const { token, username } = await provisionTenant(kubeConfig, {
    namespace: DEMO_NAMESPACE,
    serviceAccount: DEMO_SERVICE_ACCOUNT,
  });
  const objects = makeObjectClient(kubeConfig);
  const wanted = (o: KubernetesObject): boolean =>
    o.kind === QUEUE_BINDING_KIND ||
    o.kind === 'Secret' ||
    (o.kind === COUCH_INSTANCE_KIND && (o as { spec?: { plan?: string } }).spec?.plan === 'free');
  const databases = await provideLocalQueueDatabases(options.examples.filter(wanted));
  const stop = async (): Promise<void> => {
    await Promise.all(databases.servers.map((server) => server.stop()));
  };
  try {
    for (const object of databases.manifests) {
      await applyObject(
        objects,
        { ...object, metadata: { ...object.metadata, namespace: DEMO_NAMESPACE } },
        { fieldManager: 'settee-local' },
      );
    }
    const tokenFile = path.join(options.stateDir, 'demo-token');
    await fs.writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    return { namespace: DEMO_NAMESPACE, username, tokenFile, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The console's own kubeconfig: the cluster, and the token of a ServiceAccount that may only create
 * TokenReviews, as the chart gives it. Everything else the console does uses each user's token.
 */
export async function writeConsoleKubeconfig(kubeConfig: KubeConfig, stateDir: string): Promise<string> {
  const token = await provisionConsoleIdentity(kubeConfig, {
    namespace: 'default',
    serviceAccount: 'settee-console',
  });
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no cluster');
  const own = new KubeConfig();
  own.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'settee-console', token }],
    contexts: [{ name: 'settee-console', cluster: cluster.name, user: 'settee-console' }],
    currentContext: 'settee-console',
  });
  const file = path.join(stateDir, 'console.kubeconfig');
  await fs.writeFile(file, own.exportConfig(), { mode: 0o600 });
  return file;
}
