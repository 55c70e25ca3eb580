import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { COUCH_INSTANCE_KIND } from '../api/couch-instance.js';
import { QUEUE_BINDING_KIND } from '../api/queue-binding.js';
import { applyObject, makeObjectClient } from '../kube/apply.js';
import { provideLocalQueueDatabases } from './local-queue-databases.js';
import { provisionConsoleIdentity, provisionTenant } from './tenant-access.js';
import { keepTokenFileFresh } from './token-file.js';

export const DEMO_NAMESPACE = 'demo';
export const DEMO_SERVICE_ACCOUNT = 'demo-user';

export interface DemoTenant {
  namespace: string;
  username: string;
  /** File holding the demo user's bearer token (mode 0600), to paste into the console; renewed every 12 h. */
  tokenFile: string;
  /** Stops the demo's own redis-server and the token's renewal. */
  stop(): Promise<void>;
}

/**
 * `make run`'s demo tenant: namespace `demo`, ServiceAccount `demo-user` with the tenant Role there
 * only (local/tenant-access.ts), the free example instance and the example QueueBinding (on a
 * redis-server of its own) so the console has something to show, and the user's token in a file.
 */
export async function createDemoTenant(
  kubeConfig: KubeConfig,
  options: {
    stateDir: string;
    examples: KubernetesObject[];
    onError?: (message: string) => void;
    /** Where a restart of the demo's redis-server (after it exited) is told. */
    log?: (message: string) => void;
  },
): Promise<DemoTenant> {
  const { username } = await provisionTenant(kubeConfig, {
    namespace: DEMO_NAMESPACE,
    serviceAccount: DEMO_SERVICE_ACCOUNT,
  });
  const objects = makeObjectClient(kubeConfig);
  const wanted = (o: KubernetesObject): boolean =>
    o.kind === QUEUE_BINDING_KIND ||
    o.kind === 'Secret' ||
    (o.kind === COUCH_INSTANCE_KIND && (o as { spec?: { plan?: string } }).spec?.plan === 'free');
  const databases = await provideLocalQueueDatabases(options.examples.filter(wanted), {
    dataRoot: path.join(options.stateDir, 'redis', DEMO_NAMESPACE),
    ...(options.log && { log: options.log }),
  });
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
    const token = await keepTokenFileFresh(kubeConfig, {
      namespace: DEMO_NAMESPACE,
      serviceAccount: DEMO_SERVICE_ACCOUNT,
      file: path.join(options.stateDir, 'demo-token'),
      ...(options.onError && { onError: options.onError }),
    });
    return {
      namespace: DEMO_NAMESPACE,
      username,
      tokenFile: token.file,
      stop: async () => {
        token.stop();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The console's own kubeconfig: the cluster, and a ServiceAccount that may only create TokenReviews,
 * as the chart gives it. Its token is in a file renewed every 12 h, which the client re-reads every
 * minute (client-node's `tokenFile` auth provider, as in a pod's projected token), so a long
 * `make run` keeps signing users in. Everything else the console does uses each user's token.
 */
export async function writeConsoleKubeconfig(
  kubeConfig: KubeConfig,
  options: { stateDir: string; onError?: (message: string) => void },
): Promise<{ file: string; stop(): void }> {
  const ref = { namespace: 'default', serviceAccount: 'settee-console' };
  await provisionConsoleIdentity(kubeConfig, ref);
  const token = await keepTokenFileFresh(kubeConfig, {
    ...ref,
    file: path.join(options.stateDir, 'console-token'),
    ...(options.onError && { onError: options.onError }),
  });
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) {
    token.stop();
    throw new Error('the kubeconfig names no cluster');
  }
  const own = new KubeConfig();
  own.loadFromOptions({
    clusters: [cluster],
    users: [
      { name: 'settee-console', authProvider: { name: 'tokenFile', config: { tokenFile: token.file } } },
    ],
    contexts: [{ name: 'settee-console', cluster: cluster.name, user: 'settee-console' }],
    currentContext: 'settee-console',
  });
  const file = path.join(options.stateDir, 'console.kubeconfig');
  await fs.writeFile(file, own.exportConfig(), { mode: 0o600 });
  return { file, stop: token.stop };
}
