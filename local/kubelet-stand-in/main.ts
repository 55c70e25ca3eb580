/**
 * LOCAL PLATFORM ONLY: the kubelet stand-in as a process (`make run` starts it; see
 * kubelet-stand-in.ts). It registers make run's one node. Environment: KUBECONFIG,
 * SETTEE_WATCH_NAMESPACE (default every namespace), SETTEE_KUBELET_DATA_DIR (where volumes live,
 * default .settee/local/volumes), SETTEE_LOG_LEVEL, and SETTEE_COUCHDB_RELEASE (couchdb-release.ts) to
 * run Apache CouchDB instead of the pouchdb-server stand-in.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deepFreeze, EnvReader } from '../../observability/env-reader.js';
import { loadKubeConfig } from '../../kube/clients.js';
import { createLogger, errorMessage, LOG_LEVELS } from '../../observability/logger.js';
import { startKubeletStandIn } from './kubelet-stand-in.js';
import { DEFAULT_LOCAL_NODES } from './node-object.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function main(): Promise<void> {
  const read = new EnvReader(process.env);
  const config = deepFreeze({
    namespace: read.optionalString('SETTEE_WATCH_NAMESPACE'),
    dataRoot: path.resolve(
      read.string('SETTEE_KUBELET_DATA_DIR', path.join(ROOT, '.settee', 'local', 'volumes')),
    ),
    logLevel: read.oneOf('SETTEE_LOG_LEVEL', LOG_LEVELS, 'info'),
  });
  read.assertValid();
  const logger = createLogger({ level: config.logLevel, component: 'kubelet-stand-in' });
  const standIn = await startKubeletStandIn({
    kubeConfig: loadKubeConfig(),
    ...config,
    nodes: DEFAULT_LOCAL_NODES,
    registerNodes: true,
    logger,
  });
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    standIn.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('stop failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  console.error(`kubelet stand-in failed to start: ${errorMessage(err)}`);
  process.exit(1);
});
