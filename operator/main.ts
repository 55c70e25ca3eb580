import { loadOperatorConfig, type OperatorConfig } from './config.js';
import { ConfigError } from '../observability/env-reader.js';
import { loadKubeConfig } from '../kube/clients.js';
import { createLogger, errorMessage } from '../observability/logger.js';
import { startOperator } from './operator.js';

function loadConfigOrExit(): OperatorConfig {
  try {
    return loadOperatorConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}

/** The exit code of a replica that lost its Lease: not a crash, but it must restart to stand again. */
const EXIT_LOST_LEADERSHIP = 3;

/**
 * The operator process: environment -> config -> kubeconfig (KUBECONFIG or in-cluster) ->
 * startOperator (operator.ts) -> signals. SIGTERM/SIGINT shut down gracefully within
 * SETTEE_SHUTDOWN_TIMEOUT; a second signal exits at once. A replica that lost its Lease exits
 * with EXIT_LOST_LEADERSHIP once its reconciles stopped or a short grace passed (leader-election.ts),
 * so that nothing it still had in flight writes while a new leader acts; it restarts as a standby.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.observability.logLevel, component: 'operator' });
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled rejection', { error: errorMessage(reason) });
    process.exit(1);
  });

  const operator = await startOperator({
    config,
    kubeConfig: loadKubeConfig(),
    logger,
    onLostLeadership: () => {
      logger.error('exiting after losing leadership; restarting as a standby', {
        exitCode: EXIT_LOST_LEADERSHIP,
      });
      process.exit(EXIT_LOST_LEADERSHIP);
    },
  });

  let shuttingDown = false;
  const shutDown = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn('second signal; exiting now', { signal });
      process.exit(1);
    }
    shuttingDown = true;
    logger.info('signal received; shutting down', { signal });
    const deadline = setTimeout(() => {
      logger.error('shutdown timed out; exiting', { timeoutMs: config.shutdownTimeoutMs });
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    operator.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutDown);
  process.on('SIGINT', shutDown);
}

main().catch((err: unknown) => {
  process.stderr.write(`operator failed to start: ${errorMessage(err)}\n`);
  process.exit(1);
});
