import { randomBytes } from 'node:crypto';
import {
  loadQueueConfig,
  validateQueueConfig,
  type QueueConfig,
} from '../../../gateway/queue/core/config.js';

/**
 * A queue config for tests: loopback destinations allowed through the SSRF allowlist (the only
 * addresses tests may ever connect to), and every interval short so retries take milliseconds.
 */
export function testQueueConfig(overrides: Partial<QueueConfig> = {}): QueueConfig {
  return validateQueueConfig({
    ...loadQueueConfig({}),
    ssrfAllowlist: ['127.0.0.0/8'],
    pollIntervalMs: 25,
    blockMs: 200,
    retryDelayScale: 0.001,
    deliveryTimeoutMs: 2_000,
    reclaimIdleMs: 3_000,
    consumerName: `test-${randomBytes(4).toString('hex')}`,
    ...overrides,
  });
}
