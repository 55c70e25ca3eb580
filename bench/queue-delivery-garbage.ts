/**
 * Heap allocated per delivery by the queue gateway, exactly, builds side by side (issue 26 item 2):
 * each build's bundled gateway (spawnQueueGateway's process) drains WARMUP messages, then BACKLOG
 * signed ones to a loopback receiver, rounds alternating the builds. A full GC is forced at both
 * edges of the measured drain (SIGUSR2 to a preload run with --expose-gc) and V8's --trace-gc-nvp
 * counts are summed between them: no young generation's worth of bytes is left uncounted, and
 * bytes do not move with the machine's load as CPU time does (docs/queue.md, Performance). Each
 * drain's deliveries a second and the gateway process's CPU per delivery (between the two GCs, so
 * the forced ones are not in it) are given beside them; those do move with the load.
 *
 *   npx tsx bench/queue-delivery-garbage.ts [other-build.mjs ...]   (QUEUE_GARBAGE_ROUNDS=3)
 *     QUEUE_GATEWAY_NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>" (a profile of each gateway's drains)
 *
 * The current tree is bundled and measured; other builds are bundles of another checkout
 * (local/bundle.ts bundleEntry of test/helpers/queue/queue-gateway-process.ts), copied inside a
 * repository so that they resolve its node_modules.
 */
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { bundleEntry } from '../local/bundle.js';
import { startProcess } from '../local/process.js';
import { waitFor } from '../local/wait.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, round } from './lib/stats.js';
import type { CountingReceiver } from './queue/counting-receiver.js';
import { FULL_GC_TRACE_FLAGS, forceFullGc, GcCount } from './queue/gc-count.js';
import { startDrainBench } from './queue-publish/drain-bench.js';
import { storeBacklog } from './queue-publish/delivery-drain.js';
import { BACKLOG, KEY_PREFIX } from './queue-publish/publish-settings.js';

const ROUNDS = Number(process.env.QUEUE_GARBAGE_ROUNDS ?? '3');
const WARMUP = 2_000;
const NODE_FLAGS = (process.env.QUEUE_GATEWAY_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');

/**
 * KB allocated per delivery of BACKLOG messages by a gateway started from `bundle`, its deliveries
 * a second, first to last, and its CPU µs per delivery (under the GC trace's flags, as every build here).
 */
async function measure(
  bundle: string,
  redis: Redis,
  receiver: CountingReceiver,
  env: NodeJS.ProcessEnv,
): Promise<{ kb: number; perSecond: number; cpuUs: number }> {
  const stream = queueKeys(KEY_PREFIX).stream;
  await redis.del(stream);
  const gc = new GcCount();
  const proc = startProcess({
    name: 'queue-gateway',
    command: process.execPath,
    args: [...FULL_GC_TRACE_FLAGS, ...NODE_FLAGS, bundle],
    env,
    onLine: gc.onLine,
  });
  try {
    await waitFor('the gateway to listen', async () => /listening (\S+)/.exec(proc.output())?.[1], {
      timeoutMs: 180_000,
      abort: proc.exited,
    });
    const fullGc = () => forceFullGc(proc.pid, gc);
    const drain = async (count: number): Promise<void> => {
      receiver.reset();
      await storeBacklog(redis, stream, receiver.url, count);
      await waitFor('the drain', async () => (receiver.received >= count ? true : undefined), {
        timeoutMs: 600_000,
        intervalMs: 20,
      });
    };
    await drain(WARMUP);
    await fullGc();
    const before = gc.totals().allocatedBytes;
    const cpuBefore = cpuSeconds(proc.pid);
    await drain(BACKLOG);
    const cpuUs = ((cpuSeconds(proc.pid) - cpuBefore) * 1e6) / BACKLOG;
    const perSecond = ((BACKLOG - 1) / (receiver.lastAt - receiver.firstAt)) * 1_000;
    await fullGc();
    return { kb: (gc.totals().allocatedBytes - before) / 1_024 / BACKLOG, perSecond, cpuUs };
  } finally {
    await proc.stop();
  }
}

async function main(): Promise<void> {
  const builds = [await bundleEntry('test/helpers/queue/queue-gateway-process.ts'), ...process.argv.slice(2)];
  const { redis, receiver, env, close } = await startDrainBench({ appendOnly: false });
  const kb: number[][] = builds.map(() => []);
  const rates: number[][] = builds.map(() => []);
  const cpu: number[][] = builds.map(() => []);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      // Alternating: each build goes first in some rounds.
      const order = builds.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const figures = await measure(builds[i]!, redis, receiver, env);
        kb[i]!.push(figures.kb);
        rates[i]!.push(figures.perSecond);
        cpu[i]!.push(figures.cpuUs);
        console.log(
          `round ${r + 1}: ${path.basename(builds[i]!)} ${round(figures.kb, 2)} KB a delivery, ${Math.round(figures.perSecond)}/s, ` +
            `${Math.round(figures.cpuUs)} µs CPU a delivery, load ${round(os.loadavg()[0]!, 1)}`,
        );
      }
    }
    for (const [i, build] of builds.entries()) {
      const [values, perSecond, us] = [kb[i]!, rates[i]!, cpu[i]!];
      console.log(
        `${path.basename(build)}: ${round(median(values), 2)} KB a delivery [${round(Math.min(...values), 2)}-${round(Math.max(...values), 2)}], ` +
          `${Math.round(median(perSecond))}/s [${Math.round(Math.min(...perSecond))}-${Math.round(Math.max(...perSecond))}], ` +
          `${Math.round(median(us))} µs CPU a delivery [${Math.round(Math.min(...us))}-${Math.round(Math.max(...us))}]`,
      );
    }
  } finally {
    await close();
  }
}

await main();
