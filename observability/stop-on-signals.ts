import type { Logger } from 'winston';
import { errorMessage } from './logger.js';

/**
 * Stops a server process gracefully on SIGTERM or SIGINT: `stop` once, whatever signals follow,
 * then exit 0, or 1 when stopping failed. The gateway and the console share it; the operator adds
 * a deadline and a second-signal exit of its own (operator/main.ts).
 */
export function stopOnSignals(options: { logger: Logger; stop: () => Promise<void> }): void {
  const { logger, stop } = options;
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
