/**
 * bench/queue-publish.ts, phase 1: publishing alone (the gateway's workers and the floor's delivery
 * loop off): single publishes in rounds alternating gateway and floor, direct XADDs of the same
 * messages, and batches; prints its table.
 */
import type { Redis } from 'ioredis';
import type { QueueTarget } from '../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../gateway/queue/core/keys.js';
import type { RedisServer } from '../../local/redis-server.js';
import { alternateRounds, medianRun, type MeasuredPublishRun } from '../lib/alternating-rounds.js';
import { cpuSeconds } from '../lib/process-usage.js';
import { round } from '../lib/stats.js';
import { startFloorQueue, type FloorSpec } from '../queue/floor-queue.js';
import { runPublishLoad, type PublishLoadResult } from '../queue/publish-load.js';
import {
  BATCH,
  BODY,
  CONNECTIONS,
  FLOOR_PREFIX,
  KEY_PREFIX,
  ROUNDS,
  SECONDS,
  WARMUP_SECONDS,
  startGateway,
} from './publish-settings.js';

export interface PublishingFigures {
  single: ReturnType<typeof medianRun>;
  /**
   * The gateway's CPU per publish over the floor's, per pair of adjacent rounds: a ratio of two
   * rounds that shared the machine's load, where a ratio of the two sides' medians could pair a
   * round the machine starved with one it did not (docs/queue.md, Performance).
   */
  cpuRatios: number[];
  floorSingle: ReturnType<typeof medianRun>;
  direct: PublishLoadResult;
  batch: PublishLoadResult;
}

const us = (value: number): string => `${round(value / 1_000, 2)} ms`;

/** A publish load run, with the CPU the serving process spent per message stored on `stream`. */
async function publishRun(
  load: Parameters<typeof runPublishLoad>[0],
  pid: number,
  inspect: Redis,
  stream: string,
): Promise<MeasuredPublishRun> {
  const [cpu, stored] = [cpuSeconds(pid), await inspect.xlen(stream)];
  const result = await runPublishLoad(load);
  const cpuUs = ((cpuSeconds(pid) - cpu) * 1e6) / ((await inspect.xlen(stream)) - stored);
  return { ...result, cpuUs };
}

export async function benchPublishing(options: {
  redis: RedisServer;
  inspect: Redis;
  target: QueueTarget;
  floorSpec: FloorSpec;
  receiverUrl: string;
}): Promise<PublishingFigures> {
  const { redis, inspect, target, floorSpec, receiverUrl } = options;
  const gateway = await startGateway(target, false);
  let floor: Awaited<ReturnType<typeof startFloorQueue>> | undefined;
  try {
    floor = await startFloorQueue(floorSpec);
    const queueUrl = `${gateway.baseUrl}/queue/bench/db`;
    const common = {
      connections: CONNECTIONS,
      durationMs: SECONDS * 1_000,
      warmupMs: 1_000,
      token: target.token,
    };
    const publishLoad = (url: string) => ({ ...common, mode: 'http' as const, url, body: BODY });
    const sides = [
      {
        url: `${queueUrl}/v2/publish/${receiverUrl}`,
        pid: gateway.proc.pid,
        stream: queueKeys(KEY_PREFIX).stream,
      },
      {
        url: `${floor.baseUrl}/v2/publish/${receiverUrl}`,
        pid: floor.proc.pid,
        stream: queueKeys(FLOOR_PREFIX).stream,
      },
    ];
    for (const side of sides)
      await runPublishLoad({ ...publishLoad(side.url), durationMs: WARMUP_SECONDS * 1_000, warmupMs: 0 });
    const [singleRuns, floorSingleRuns] = await alternateRounds(
      ROUNDS,
      sides.map((side) => () => publishRun(publishLoad(side.url), side.pid, inspect, side.stream)),
    );
    const single = medianRun(singleRuns!);
    const floorSingle = medianRun(floorSingleRuns!);
    const cpuRatios = singleRuns!.map((run, i) => run.cpuUs / floorSingleRuns![i]!.cpuUs);
    const direct = await runPublishLoad({
      ...common,
      mode: 'xadd',
      body: BODY,
      destination: receiverUrl,
      redis: { host: redis.host, port: redis.port, password: redis.password, keyPrefix: KEY_PREFIX },
    });
    const batchBody = JSON.stringify(
      Array.from({ length: BATCH }, () => ({
        destination: receiverUrl,
        body: BODY,
        headers: { 'content-type': 'application/json' },
      })),
    );
    const batch = await runPublishLoad({
      ...common,
      connections: 16,
      mode: 'http',
      url: `${queueUrl}/v2/batch`,
      body: batchBody,
      messagesPerRequest: BATCH,
    });
    printPublishing({ single, floorSingle, direct, batch });
    return { single, cpuRatios, floorSingle, direct, batch };
  } finally {
    await gateway.proc.stop();
    await floor?.proc.stop();
  }
}

function printPublishing({ single, floorSingle, direct, batch }: Omit<PublishingFigures, 'cpuRatios'>): void {
  console.log(
    `publishing (closed loop, workers off; single publishes: medians of ${ROUNDS} alternating rounds)`,
  );
  console.log('                                                   msgs/s    p50        p99        CPU/msg');
  for (const [name, r] of [
    [`API single publish, ${CONNECTIONS} connections`, single],
    [`floor single publish, ${CONNECTIONS} connections`, floorSingle],
    [`direct Redis XADD, ${CONNECTIONS} concurrent`, direct],
    [`API batch of ${BATCH}, 16 connections`, batch],
  ] as const) {
    console.log(
      `  ${name.padEnd(47)} ${String(Math.round(r.messagesPerSecond)).padStart(7)}   ${us(r.latencyUs.p50).padEnd(10)} ${us(r.latencyUs.p99).padEnd(10)} ${'cpuUs' in r ? `${round(r.cpuUs)} µs [${r.cpuSpread}]` : ''}${r.errors + r.non2xx > 0 ? `  (${r.errors} errors, ${r.non2xx} non-2xx)` : ''}`,
    );
  }
  console.log(
    `  API / XADD: throughput ${round(single.messagesPerSecond / direct.messagesPerSecond, 2)}, ` +
      `p50 ${round(single.latencyUs.p50 / direct.latencyUs.p50, 2)}x, p99 ${round(single.latencyUs.p99 / direct.latencyUs.p99, 2)}x\n`,
  );
}
