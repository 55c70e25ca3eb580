/**
 * What bench/workflow.ts runs against: one gateway process (delivery workers on) on a Redis with
 * AOF everysec, the unchanged @upstash/workflow SDK's Express serve() in this process (verifying
 * every delivery's signature), its Client, a QStash client and a receiver for the plain anchor.
 */
import fs from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client as QStashClient } from '@upstash/qstash';
import { Client } from '@upstash/workflow';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../local/redis-server.js';
import { waitFor } from '../../local/wait.js';
import { queueKeys, type QueueKeys } from '../../gateway/queue/core/keys.js';
import type { WorkflowRunRecord } from '../../gateway/queue/core/workflow-message.js';
import { WorkflowRunStore } from '../../gateway/queue/stores/workflow-run-store.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../../test/helpers/queue/test-queue-target.js';
import {
  startWorkflowEndpoints,
  type WorkflowDefinition,
  type WorkflowEndpoints,
} from '../../test/helpers/queue/workflow-endpoints.js';
import { startArrivalReceiver, type ArrivalReceiver } from '../lib/arrival-receiver.js';
import { countSentCommands } from '../lib/process-usage.js';
import { buildQueueGatewayEnv } from '../lib/gateway-bench-env.js';

const KEY_PREFIX = '{wfbench}:';

/** Epoch ms with sub-ms precision, comparable across the bench's processes. */
export const now = (): number => performance.timeOrigin + performance.now();

export interface WorkflowHarness {
  gateway: QueueGatewayProcess;
  endpoints: WorkflowEndpoints;
  receiver: ArrivalReceiver;
  workflows: Client;
  qstash: QStashClient;
  runs: WorkflowRunStore;
  /** A connection of its own, for the bench's reads (memory, step counts, waiters). */
  inspect: Redis;
  /** The commands sent on `inspect` so far: the bench's own, left out of the gateway's counts. */
  inspectCommands: { readonly sent: number };
  keys: QueueKeys;
  stop(): Promise<void>;
}

/**
 * Starts Redis, the gateway (`batch` items a batch at most) and the endpoints serving `workflows`
 * at `/<name>`; `onArrival` hears each delivery to them (workflow-endpoints.ts).
 */
export async function startWorkflowHarness(options: {
  workflows: Record<string, WorkflowDefinition>;
  batch: number;
  onArrival: (req: http.IncomingMessage, at: number) => void;
}): Promise<WorkflowHarness> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-workflow-bench-'));
  const parts: Partial<WorkflowHarness> & { redis?: RedisServer } = {};
  const stop = async () => {
    await parts.endpoints?.close();
    await parts.gateway?.proc.stop();
    parts.inspect?.disconnect();
    await parts.receiver?.close();
    await parts.redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    const redis = (parts.redis = await startRedis({ dataDir }));
    const target = testQueueTarget(redis, { namespace: 'bench', name: 'wf' });
    parts.gateway = await spawnQueueGateway({
      targets: [target],
      bundled: true,
      env: buildQueueGatewayEnv(KEY_PREFIX, {
        SETTEE_QUEUE_WORKER_CONCURRENCY: '128',
        SETTEE_QUEUE_MAX_BATCH_SIZE: String(options.batch),
      }),
    });
    const queueUrl = `${parts.gateway.baseUrl}/queue/bench/wf`;
    const keys = queueKeys(KEY_PREFIX);
    parts.inspect = new Redis({ host: redis.host, port: redis.port, password: redis.password, protocol: 2 });
    parts.receiver = await startArrivalReceiver();
    parts.endpoints = await startWorkflowEndpoints({
      target,
      queueUrl,
      workflows: options.workflows,
      onArrival: options.onArrival,
    });
    return {
      gateway: parts.gateway,
      endpoints: parts.endpoints,
      receiver: parts.receiver,
      workflows: new Client({ baseUrl: queueUrl, token: target.token }),
      qstash: new QStashClient({ baseUrl: queueUrl, token: target.token, retry: false }),
      runs: new WorkflowRunStore(parts.inspect, keys),
      inspect: parts.inspect,
      inspectCommands: countSentCommands(parts.inspect),
      keys,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Waits for every run in `runIds` to succeed (one that ends otherwise throws); their records. Each
 * poll reads only the runs not yet seen finished: 1,000 runs read whole every 100 ms were 10,000
 * of the bench's own commands a second on the Redis it measures.
 */
export async function finishedRuns(
  h: WorkflowHarness,
  runIds: string[],
  timeoutMs: number,
): Promise<WorkflowRunRecord[]> {
  const finished = new Map<string, WorkflowRunRecord>();
  return waitFor(
    `${runIds.length} workflow runs to finish`,
    async () => {
      const open = runIds.filter((id) => !finished.has(id));
      const records = await Promise.all(open.map((id) => h.runs.get(id)));
      for (const r of records) {
        if (r && r.state !== 'RUN_STARTED' && r.state !== 'RUN_SUCCESS')
          throw new Error(`run ${r.runId} ended ${r.state}: ${r.failure ?? ''}`);
        if (r?.state === 'RUN_SUCCESS') finished.set(r.runId, r);
      }
      return finished.size === runIds.length ? runIds.map((id) => finished.get(id)!) : undefined;
    },
    { timeoutMs, intervalMs: runIds.length > 1 ? 100 : 2 },
  );
}
