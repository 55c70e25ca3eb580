/**
 * How late a queue's delayed messages start (issue 13): 200 messages enqueued with Upstash-Delay
 * across 20 queues, through two gateway replicas (processes with their delivery workers), and for
 * each message the time from its notBefore (read back from GET /v2/messages/{id}) to its arrival
 * at a receiver on loopback. Side by side in one run, two gateway pairs per round:
 *   - audit only (SETTEE_QUEUE_DELAY_WAKEUPS=false): the path before wake-ups, where a delayed
 *     head starts at the next maintenance pass's slot audit (SETTEE_QUEUE_POLL_INTERVAL_MS, 1 s);
 *   - wake-ups (the default): the replica that enqueued arms one timer per queue for its due time.
 * Each queue has parallelism 10 and gets its 10 messages in the order they come due, so no slot
 * and no FIFO wait adds to the lateness. Rounds: QUEUE_DELAY_BENCH_ROUNDS (default 3); medians,
 * p99 and max per round, then the median with the spread (min-max) over rounds, and the ratio.
 *
 *   npx tsx bench/queue-delay.ts
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import type { QueueTarget } from '../gateway/queue/core/binding-registry.js';
import { spawnQueueGateway, type QueueGatewayProcess } from '../test/helpers/queue/spawn-queue-gateway.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { startArrivalReceiver, type ArrivalReceiver } from './lib/arrival-receiver.js';
import { median, medianSpreadText, quantile, round } from './lib/stats.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { queueApi } from './queue/queue-api.js';

const KEY_PREFIX = '{bench}:';
const ROUNDS = Number(process.env.QUEUE_DELAY_BENCH_ROUNDS ?? '3');
const QUEUES = 20;
const PER_QUEUE = 10;
/** Delays are spread over this range (ms), so due times do not line up with the poll interval. */
const MIN_DELAY_MS = 1_500;
const DELAY_SPREAD_MS = 2_000;

const MODES = [
  { name: 'audit only (before)', env: { SETTEE_QUEUE_DELAY_WAKEUPS: 'false' } },
  { name: 'wake-ups (after)', env: { SETTEE_QUEUE_DELAY_WAKEUPS: 'true' } },
] as const;

interface Lateness {
  p50: number;
  p99: number;
  max: number;
}

function startGateway(target: QueueTarget, env: Record<string, string>): Promise<QueueGatewayProcess> {
  return spawnQueueGateway({
    targets: [target],
    bundled: true,
    env: buildQueueGatewayEnv(KEY_PREFIX, env),
  });
}

/** One round on two replicas: enqueues the 200 delayed messages and measures their lateness. */
async function delayRound(
  bases: readonly string[],
  token: string,
  receiver: ArrivalReceiver,
): Promise<Lateness> {
  const notBefore = new Map<string, number>();
  await Promise.all(
    Array.from({ length: QUEUES }, async (_, q) => {
      const delays = Array.from({ length: PER_QUEUE }, () => MIN_DELAY_MS + Math.random() * DELAY_SPREAD_MS)
        .map(Math.round)
        .sort((a, b) => a - b);
      for (const [m, delay] of delays.entries()) {
        const base = bases[(q + m) % bases.length]!;
        const response = await queueApi(base, token, `/v2/enqueue/delay-q${q}/${receiver.url}/q${q}`, {
          method: 'POST',
          headers: { 'upstash-delay': `${delay}ms`, 'content-type': 'text/plain' },
          body: `m${m}`,
        });
        const { messageId } = (await response.json()) as { messageId: string };
        const stored = (await (await queueApi(base, token, `/v2/messages/${messageId}`, {})).json()) as {
          notBefore: number;
        };
        notBefore.set(messageId, stored.notBefore);
      }
    }),
  );
  const total = QUEUES * PER_QUEUE;
  const arrived = () => receiver.arrivals.filter((a) => notBefore.has(a.messageId));
  await waitFor('every delayed message', async () => (arrived().length >= total ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 20,
  });
  const late = arrived().map((a) => a.at - notBefore.get(a.messageId)!);
  if (late.length !== total) throw new Error(`expected ${total} deliveries, got ${late.length}`);
  if (Math.min(...late) < 0)
    throw new Error(`a message arrived before its notBefore (${Math.min(...late)} ms)`);
  return { p50: median(late), p99: quantile(late, 0.99), max: Math.max(...late) };
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-delay-bench-'));
  let redis: RedisServer | undefined;
  let receiver: ArrivalReceiver | undefined;
  const gateways: QueueGatewayProcess[] = [];
  try {
    redis = await startRedis({ dataDir });
    receiver = await startArrivalReceiver();
    const target = testQueueTarget(redis, { namespace: 'bench', limits: { maxQueues: QUEUES } });
    console.log(
      `queue delay benchmark: ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}, ${ROUNDS} rounds of ${QUEUES * PER_QUEUE} delayed messages over ${QUEUES} queues, two replicas, poll interval 1 s\n`,
    );
    const results = new Map<string, Lateness[]>(MODES.map((m) => [m.name, []]));
    for (let r = 0; r < ROUNDS; r += 1) {
      for (const mode of MODES) {
        gateways.push(await startGateway(target, mode.env), await startGateway(target, mode.env));
        const bases = gateways.map((g) => `${g.baseUrl}/queue/bench/db`);
        for (let q = 0; q < QUEUES; q += 1)
          await queueApi(bases[0]!, target.token, '/v2/queues', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ queueName: `delay-q${q}`, parallelism: PER_QUEUE }),
          });
        const lateness = await delayRound(bases, target.token, receiver);
        results.get(mode.name)!.push(lateness);
        console.log(
          `round ${r + 1}, ${mode.name}: lateness p50 ${round(lateness.p50)} ms, p99 ${round(lateness.p99)} ms, max ${round(lateness.max)} ms`,
        );
        await Promise.all(gateways.map((g) => g.proc.stop()));
        gateways.length = 0;
      }
    }
    console.log('\nlateness from notBefore to arrival, ms: median over rounds (min-max)');
    console.log('| path | p50 | p99 | max |\n|---|---|---|---|');
    for (const [name, rounds] of results)
      console.log(
        `| ${name} | ${medianSpreadText(
          rounds.map((l) => l.p50),
          0,
        )} | ${medianSpreadText(
          rounds.map((l) => l.p99),
          0,
        )} | ${medianSpreadText(
          rounds.map((l) => l.max),
          0,
        )} |`,
      );
    const [before, after] = [...results.values()];
    const ratio = (pick: (l: Lateness) => number) =>
      round(median(before!.map(pick)) / Math.max(1, median(after!.map(pick))), 1);
    console.log(`\nratio before/after: p50 ${ratio((l) => l.p50)}x, p99 ${ratio((l) => l.p99)}x`);
  } finally {
    await Promise.all(gateways.map((g) => g.proc.stop()));
    await receiver?.close();
    await redis?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
