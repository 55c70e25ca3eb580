/**
 * Signed deliveries a second from a backlog, and what the whole machine spends on each (issue 26
 * item 2): builds of the queue gateway and the floor (bench/queue/floor-queue.ts) drain the same
 * backlog in rounds that alternate them. Each side is started fresh, drains WARMUP messages
 * uncounted, then BACKLOG; beside its deliveries a second it gives the CPU per delivery of each
 * process that shares the machine's cores in the drain (the sender, Redis, the receiver: this
 * process), where the sender's main thread spent the drain (ran, waited for a CPU, idle), and how
 * idle the machine's CPUs were. A sender whose rate falls short of its CPU per delivery's either
 * waits on something of its own (its loop idle) or on the others' CPU (the machine busy, Redis's
 * and the receiver's share per delivery higher).
 *
 *   npx tsx bench/queue-delivery-rate.ts [other-build.mjs ...]   (QUEUE_RATE_ROUNDS=3)
 *
 * The current tree's gateway is bundled and measured; other builds are bundles of another
 * checkout (local/bundle.ts bundleEntry of test/helpers/queue/queue-gateway-process.ts), copied
 * inside a repository so that they resolve its node_modules.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { bundleEntry } from '../local/bundle.js';
import { startProcess, type ManagedProcess } from '../local/process.js';
import { waitFor } from '../local/wait.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import { commandUsage, cpuSeconds, mainThreadMs, redisCpuSeconds } from './lib/process-usage.js';
import { medianSpreadText, round } from './lib/stats.js';
import type { CountingReceiver } from './queue/counting-receiver.js';
import { startFloorQueue } from './queue/floor-queue.js';
import { startDrainBench } from './queue-publish/drain-bench.js';
import { storeBacklog } from './queue-publish/delivery-drain.js';
import {
  BACKLOG,
  CONCURRENCY,
  FLOOR_PREFIX,
  KEY_PREFIX,
  SIGNING_KEY,
} from './queue-publish/publish-settings.js';

const ROUNDS = Number(process.env.QUEUE_RATE_ROUNDS ?? '3');
const WARMUP = 2_000;

/** One drain's figures; CPU in µs a delivery. */
interface Drain {
  perSecond: number;
  senderUs: number;
  redisUs: number;
  receiverUs: number;
  /** Shares of the drain's wall time the sender's main thread ran and waited for a CPU. */
  ran: number;
  waited: number;
  /** Share of the machine's CPU time that was idle during the drain. */
  machineIdle: number;
  /**
   * Redis's time in each command and its calls, a delivery (INFO commandstats: a script's time
   * includes the commands it calls, which are also counted under their own names).
   */
  commands: Map<string, { us: number; calls: number }>;
}

/** Idle and total jiffies of all CPUs so far (/proc/stat's first line). */
function machineJiffies(): { idle: number; total: number } {
  const fields = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  // idle and iowait
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((a, b) => a + b, 0) };
}

interface Side {
  name: string;
  stream: string;
  start: () => Promise<ManagedProcess>;
}

async function measure(side: Side, redis: Redis, receiver: CountingReceiver): Promise<Drain> {
  await redis.del(side.stream);
  const proc = await side.start();
  try {
    const drain = async (count: number): Promise<void> => {
      receiver.reset();
      await storeBacklog(redis, side.stream, receiver.url, count);
      await waitFor('the drain', async () => (receiver.received >= count ? true : undefined), {
        timeoutMs: 600_000,
        intervalMs: 20,
      });
    };
    await drain(WARMUP);
    receiver.reset();
    const [cpu, redisCpu, commands, own, main, machine, startedAt] = [
      cpuSeconds(proc.pid),
      await redisCpuSeconds(redis),
      await commandUsage(redis),
      process.cpuUsage(),
      mainThreadMs(proc.pid),
      machineJiffies(),
      performance.now(),
    ];
    // Stored once the clocks run (the sender is waiting for it): its XADDs are in Redis's and this
    // process's figures, the same for every side.
    await storeBacklog(redis, side.stream, receiver.url, BACKLOG);
    await waitFor('the drain', async () => (receiver.received >= BACKLOG ? true : undefined), {
      timeoutMs: 600_000,
      intervalMs: 20,
    });
    const wallMs = performance.now() - startedAt;
    const [mainAfter, machineAfter, ownAfter] = [
      mainThreadMs(proc.pid),
      machineJiffies(),
      process.cpuUsage(own),
    ];
    const perDelivery = (seconds: number) => (seconds * 1e6) / BACKLOG;
    const perCommand = new Map<string, { us: number; calls: number }>();
    for (const [name, { usec, calls }] of await commandUsage(redis)) {
      const before = commands.get(name) ?? { usec: 0, calls: 0 };
      if (usec > before.usec)
        perCommand.set(name, { us: (usec - before.usec) / BACKLOG, calls: (calls - before.calls) / BACKLOG });
    }
    return {
      perSecond: ((BACKLOG - 1) / (receiver.lastAt - receiver.firstAt)) * 1_000,
      senderUs: perDelivery(cpuSeconds(proc.pid) - cpu),
      redisUs: perDelivery((await redisCpuSeconds(redis)) - redisCpu),
      // This process is the receiver, the backlog's XADDs and the wait's polling.
      receiverUs: (ownAfter.user + ownAfter.system) / BACKLOG,
      ran: (mainAfter.ran - main.ran) / wallMs,
      waited: (mainAfter.waited - main.waited) / wallMs,
      machineIdle: (machineAfter.idle - machine.idle) / (machineAfter.total - machine.total),
      commands: perCommand,
    };
  } finally {
    await proc.stop();
  }
}

function describe(d: Drain): string {
  return (
    `${Math.round(d.perSecond)}/s, CPU a delivery: sender ${round(d.senderUs)} µs, Redis ${round(d.redisUs)}, ` +
    `receiver ${round(d.receiverUs)}; sender's loop ran ${round(d.ran * 100)}%, waited ${round(d.waited * 100)}%, ` +
    `idle ${round(Math.max(0, 1 - d.ran - d.waited) * 100)}%; machine idle ${round(d.machineIdle * 100)}%\n` +
    `  Redis a delivery by command, µs (calls): ${[...d.commands]
      .filter(([, { us }]) => us >= 0.05)
      .sort((a, b) => b[1].us - a[1].us)
      .map(([name, { us, calls }]) => `${name} ${round(us, 1)} (${round(calls, 2)})`)
      .join(', ')}`
  );
}

async function main(): Promise<void> {
  const builds = [await bundleEntry('test/helpers/queue/queue-gateway-process.ts'), ...process.argv.slice(2)];
  // With the append-only file on (appendfsync everysec), as bench/queue-publish.ts runs it.
  const { server, redis, receiver, target, env, close } = await startDrainBench({ appendOnly: true });
  const sides: Side[] = builds.map((bundle, i) => ({
    name: i === 0 ? 'this tree' : path.basename(bundle),
    stream: queueKeys(KEY_PREFIX).stream,
    start: async () => {
      const proc = startProcess({ name: 'queue-gateway', command: process.execPath, args: [bundle], env });
      await waitFor('the gateway to listen', async () => /listening (\S+)/.exec(proc.output())?.[1], {
        timeoutMs: 180_000,
        abort: proc.exited,
      });
      return proc;
    },
  }));
  sides.push({
    name: 'floor',
    stream: queueKeys(FLOOR_PREFIX).stream,
    start: async () =>
      (
        await startFloorQueue({
          redis: { host: server.host, port: server.port, password: server.password },
          keyPrefix: FLOOR_PREFIX,
          token: target.token,
          signingKey: SIGNING_KEY,
          concurrency: CONCURRENCY,
        })
      ).proc,
  });
  const drains: Drain[][] = sides.map(() => []);
  console.log(`${os.cpus().length} CPUs, load ${round(os.loadavg()[0]!, 1)}, ${ROUNDS} rounds of ${BACKLOG}`);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = sides.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const figures = await measure(sides[i]!, redis, receiver);
        drains[i]!.push(figures);
        console.log(
          `round ${r + 1}: ${sides[i]!.name} ${describe(figures)}, load ${round(os.loadavg()[0]!, 1)}`,
        );
      }
    }
    console.log(`medians (spread), load ${round(os.loadavg()[0]!, 1)}:`);
    for (const [i, side] of sides.entries()) {
      const of = (pick: (d: Drain) => number, digits = 0) => medianSpreadText(drains[i]!.map(pick), digits);
      console.log(
        `  ${side.name}: ${of((d) => d.perSecond)}/s; CPU a delivery sender ${of((d) => d.senderUs)} µs, ` +
          `Redis ${of((d) => d.redisUs)}, receiver ${of((d) => d.receiverUs)}; loop idle ` +
          `${of((d) => Math.max(0, 1 - d.ran - d.waited) * 100)}%, machine idle ${of((d) => d.machineIdle * 100)}%`,
      );
    }
  } finally {
    await close();
  }
}

await main();
