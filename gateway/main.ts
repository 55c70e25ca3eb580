/**
 * The gateway process: `npm run gateway` (or `tsx gateway/main.ts`). Configuration comes from the
 * environment (gateway/config.ts, gateway/queue/core/config.ts), the cluster from KUBECONFIG or the
 * in-cluster service account. SIGTERM or SIGINT drains and stops it.
 */
import { EnvReader } from '../observability/env-reader.js';
import { loadKubeConfig } from '../kube/clients.js';
import { createLogger, errorMessage } from '../observability/logger.js';
import { stopOnSignals } from '../observability/stop-on-signals.js';
import { readGatewayConfig } from './config.js';
import { startGateway } from './gateway.js';
import { createQueueService, readQueueConfig } from './queue/index.js';

async function main(): Promise<void> {
  // One reader for both sections, so a bad deployment hears of every problem in one ConfigError.
  const read = new EnvReader(process.env);
  const config = readGatewayConfig(read);
  const queueConfig = readQueueConfig(read);
  read.assertValid();
  const logger = createLogger({ level: config.logLevel, component: 'gateway' });
  const kubeConfig = loadKubeConfig();
  const queue = createQueueService({
    kubeConfig,
    config: queueConfig,
    logger,
    namespace: config.watchNamespace,
    trustedProxies: config.trustedProxies,
  });
  const gateway = await startGateway({ config, kubeConfig, logger, queue });

  stopOnSignals({ logger, stop: () => gateway.stop() });
}

main().catch((err: unknown) => {
  // Config errors list every problem; anything else is a start-up failure worth its message.
  console.error(`gateway failed to start: ${errorMessage(err)}`);
  process.exit(1);
});
