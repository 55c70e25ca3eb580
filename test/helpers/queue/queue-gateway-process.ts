import { loadQueueConfig } from '../../../gateway/queue/core/config.js';
import { createLogger, type LogLevel } from '../../../observability/logger.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway } from './queue-gateway.js';

/**
 * The queue part of a gateway as a process of its own, for tests that kill it: the handler and the
 * delivery workers, configured from SETTEE_QUEUE_* like the real gateway, with its bindings given
 * as JSON in SETTEE_TEST_QUEUE_TARGETS instead of read from the Kubernetes API. It prints
 * `listening <url>` once it serves, and logs at SETTEE_LOG_LEVEL (default warn).
 * SETTEE_TEST_QUEUE_WORKERS=false leaves the delivery workers off (benchmarks of publishing alone).
 */
const targets = JSON.parse(process.env.SETTEE_TEST_QUEUE_TARGETS ?? '[]') as QueueTarget[];
const logger = createLogger({
  level: (process.env.SETTEE_LOG_LEVEL ?? 'warn') as LogLevel,
  component: 'queue-gateway',
});
const workers = process.env.SETTEE_TEST_QUEUE_WORKERS !== 'false';
const gateway = await startTestQueueGateway({
  config: loadQueueConfig(process.env),
  targets,
  logger,
  workers,
});
process.stdout.write(`listening ${gateway.baseUrl}\n`);
process.once('SIGTERM', () => void gateway.stop().then(() => process.exit(0)));
