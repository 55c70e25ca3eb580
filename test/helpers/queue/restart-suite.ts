import fs from 'node:fs/promises';
import type { RedisServer } from '../../../local/redis-server.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from './queue-gateway.js';
import { testQueueConfig } from './queue-config.js';
import { startTestReceiver, type TestReceiver } from './test-receiver.js';

/** What the Redis-restart suites run beside their redis-server. */
export interface RestartSuiteProcesses {
  receiver: TestReceiver;
  replicas: TestQueueGateway[];
}

/**
 * A receiver that checks `signingKey` and one in-process gateway replica per consumer name, each
 * serving `target`: the replicas outlive the redis-server the suites restart under them.
 */
export async function startRestartSuiteProcesses(
  target: QueueTarget,
  signingKey: string,
  consumerNames: string[],
): Promise<RestartSuiteProcesses> {
  const receiver = await startTestReceiver({ currentSigningKey: signingKey });
  const replicas = await Promise.all(
    consumerNames.map((consumerName) =>
      startTestQueueGateway({ config: testQueueConfig({ consumerName }), targets: [target] }),
    ),
  );
  return { receiver, replicas };
}

/** Stops what a restart suite's beforeAll started (any of it may be missing if that failed) and removes its data. */
export async function stopRestartSuite(suite: {
  replicas?: TestQueueGateway[];
  receiver?: TestReceiver;
  redis?: RedisServer;
  dataDir?: string;
}): Promise<void> {
  await Promise.all((suite.replicas ?? []).map((replica) => replica.stop()));
  await suite.receiver?.close();
  await suite.redis?.stop();
  if (suite.dataDir) await fs.rm(suite.dataDir, { recursive: true, force: true });
}
