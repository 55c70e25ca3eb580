/**
 * The console process: `npm run console` (or `tsx console/main.ts`). Settings come from the
 * environment (console/config.ts); the cluster's address from KUBECONFIG or the in-cluster
 * ServiceAccount, whose identity is used for TokenReviews only. SIGTERM or SIGINT stops it.
 */
import { loadKubeConfig } from '../kube/clients.js';
import { EnvReader } from '../observability/env-reader.js';
import { createLogger, errorMessage } from '../observability/logger.js';
import { stopOnSignals } from '../observability/stop-on-signals.js';
import { readConsoleConfig } from './config.js';
import { startConsoleServer } from './console-server.js';
import { KubeHttp } from './kube/kube-http.js';

async function main(): Promise<void> {
  const read = new EnvReader(process.env);
  const config = readConsoleConfig(read);
  read.assertValid();
  const logger = createLogger({ level: config.logLevel, component: 'console' });
  if (!process.env.SETTEE_CONSOLE_SESSION_SECRET)
    logger.warn('SETTEE_CONSOLE_SESSION_SECRET is not set: sessions end when this process restarts');
  const kube = await KubeHttp.create(loadKubeConfig(), { timeoutMs: config.kubeRequestTimeoutMs });
  const server = await startConsoleServer({ config, kube, logger });
  logger.info('console listening', { url: server.url });

  stopOnSignals({ logger, stop: () => server.stop() });
}

main().catch((err: unknown) => {
  console.error(`console failed to start: ${errorMessage(err)}`);
  process.exit(1);
});
