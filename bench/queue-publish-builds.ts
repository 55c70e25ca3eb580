/**
 * A publish's cost, builds side by side (issue 26 item 2): the current tree's bundled queue gateway,
 * any other bundles given, and the floor (bench/queue/floor-queue.ts), each loaded in turn with
 * bench/queue-publish.ts's single publishes (64 connections) and batches of 100 (16 connections),
 * rounds alternating the order. Per round and side: messages stored a second, the serving
 * process's CPU and heap allocated per message, and Redis's commands, script time and CPU per
 * message (INFO commandstats and INFO cpu around the round; the database is emptied before it).
 * The heap is exact: a full GC is forced at both edges of the round (SIGUSR2 to a preload run with
 * --expose-gc) and V8's --trace-gc-nvp counts are summed between them, so bytes do not move with
 * the machine's load as CPU time does. The gateways run with their workers off.
 *
 *   npx tsx bench/queue-publish-builds.ts [other-build.mjs ...]
 *     QUEUE_BUILDS_ROUNDS=5  QUEUE_BUILDS_SECONDS=3  QUEUE_BUILDS_MODES=single,batch
 *     QUEUE_BUILDS_FLOOR=false (no floor)  QUEUE_BUILDS_BARE=true (also a bare node:http server)
 *     QUEUE_BUILDS_RATE=<n> (single publishes offered at n a second instead of the closed loop)  QUEUE_GATEWAY_NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>"
 *
 * Other builds are bundles of another checkout (local/bundle.ts bundleEntry of
 * test/helpers/queue/queue-gateway-process.ts), copied inside a repository so that they resolve its
 * node_modules.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { bundleEntry } from '../local/bundle.js';
import { startProcess, type ManagedProcess } from '../local/process.js';
import { startRedis } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import { queueKeys } from '../gateway/queue/core/keys.js';
import { testQueueTarget } from '../test/helpers/queue/test-queue-target.js';
import { buildQueueGatewayEnv } from './lib/gateway-bench-env.js';
import { commandUsage, cpuSeconds, redisCpuSeconds } from './lib/process-usage.js';
import { median, round, spread } from './lib/stats.js';
import { startFloorQueue } from './queue/floor-queue.js';
import { FULL_GC_TRACE_FLAGS, forceFullGc, GcCount } from './queue/gc-count.js';
import { offerAtFixedRate } from './queue/offer-at-rate.js';
import { runPublishLoad, type PublishLoadSpec } from './queue/publish-load.js';
import { BATCH, BODY, CONNECTIONS, SIGNING_KEY } from './queue-publish/publish-settings.js';

const ROUNDS = Number(process.env.QUEUE_BUILDS_ROUNDS ?? '5');
const SECONDS = Number(process.env.QUEUE_BUILDS_SECONDS ?? '3');
const MODES = (process.env.QUEUE_BUILDS_MODES ?? 'single,batch').split(',') as ('single' | 'batch')[];
const FLOOR = process.env.QUEUE_BUILDS_FLOOR !== 'false';
const BARE = process.env.QUEUE_BUILDS_BARE === 'true';
/**
 * Single publishes offered at this rate (open model, bench/queue/offer-at-rate.ts) instead of the
 * closed loop: on a loaded machine a closed loop's rate, and with it how many requests share one
 * turn of the event loop, moves from round to round, and a publish's bytes and CPU move with it.
 */
const RATE = Number(process.env.QUEUE_BUILDS_RATE ?? '0');
/**
 * Below the floor: node:http reading each body and answering the floor's 201 with no Redis, token
 * or message at all, so what Node's HTTP server alone costs a request on this machine shows.
 */
const BARE_SERVER = `
import http from 'node:http';
const answer = '{"messageId":"msg_AAAAAAAAAAAAAAAAAAAAAAAA"}';
const server = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () =>
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer));
});
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
server.listen(0, '127.0.0.1', () => console.log('listening http://127.0.0.1:' + server.address().port));
`;
const DESTINATION = 'http://127.0.0.1:9/hook';
/** QUEUE_GATEWAY_NODE_FLAGS go to every side's node, the floor's and the bare server's too (a profile of each). */
const GC_FLAGS = [
  ...(process.env.QUEUE_GATEWAY_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
  ...FULL_GC_TRACE_FLAGS,
];
/** The bench's own commands to Redis, not the side's. */
const OWN_COMMANDS = new Set(['info', 'flushdb', 'xlen', 'auth', 'hello', 'client|setinfo', 'select']);

interface Side {
  name: string;
  proc: ManagedProcess;
  gc: GcCount;
  /** The publish and batch URLs. */
  urls: Record<'single' | 'batch', string>;
  /** Where its messages are stored; '' for the bare server, which stores none (its requests count). */
  stream: string;
}

interface Round {
  perSecond: number;
  cpuUs: number;
  kb: number;
  redisCommands: number;
  scriptUs: number;
  redisCpuUs: number;
  load: number;
}

/** Redis's calls so far, and the microseconds of its scripts, the bench's own commands left out. */
async function commandStats(redis: Redis): Promise<{ calls: number; scriptUs: number }> {
  let calls = 0;
  let scriptUs = 0;
  for (const [name, usage] of await commandUsage(redis)) {
    if (OWN_COMMANDS.has(name)) continue;
    calls += usage.calls;
    if (name === 'evalsha' || name === 'eval') scriptUs += usage.usec;
  }
  return { calls, scriptUs };
}

async function startSide(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onLine: (line: string) => void,
): Promise<ManagedProcess> {
  const proc = startProcess({ name, command: process.execPath, args, env, onLine });
  await waitFor(`${name} to listen`, async () => /listening (\S+)/.exec(proc.output())?.[1], {
    timeoutMs: 180_000,
    abort: proc.exited,
  });
  return proc;
}

function loadOf(side: Side, mode: 'single' | 'batch', token: string, durationMs: number): PublishLoadSpec {
  const single = mode === 'single';
  const batchBody = JSON.stringify(
    Array.from({ length: BATCH }, () => ({
      destination: DESTINATION,
      body: BODY,
      headers: { 'content-type': 'application/json' },
    })),
  );
  return {
    mode: 'http',
    connections: single ? CONNECTIONS : 16,
    durationMs,
    warmupMs: 0,
    token,
    url: side.urls[mode],
    body: single ? BODY : batchBody,
    messagesPerRequest: single ? 1 : BATCH,
  };
}

async function measure(side: Side, load: PublishLoadSpec, inspect: Redis): Promise<Round> {
  await inspect.flushdb();
  await forceFullGc(side.proc.pid, side.gc);
  const [cpu, allocated, stats, redisCpu] = [
    cpuSeconds(side.proc.pid),
    side.gc.allocatedBytes,
    await commandStats(inspect),
    await redisCpuSeconds(inspect),
  ];
  const started = performance.now();
  const messages =
    RATE > 0 && load.messagesPerRequest === 1
      ? await offerAtFixedRate({
          publishUrl: load.url!,
          token: load.token!,
          rate: RATE,
          seconds: load.durationMs / 1_000,
        }).then(({ sent, failed }) => sent - failed)
      : (await runPublishLoad(load)).messages;
  const seconds = (performance.now() - started) / 1_000;
  const cpuAfter = cpuSeconds(side.proc.pid);
  const [statsAfter, redisCpuAfter, stored] = [
    await commandStats(inspect),
    await redisCpuSeconds(inspect),
    side.stream === '' ? messages : await inspect.xlen(side.stream),
  ];
  await forceFullGc(side.proc.pid, side.gc);
  return {
    // Over the load process's whole life, its start included: a rate to compare builds, not the queue's.
    perSecond: stored / seconds,
    cpuUs: ((cpuAfter - cpu) * 1e6) / stored,
    kb: (side.gc.allocatedBytes - allocated) / 1_024 / stored,
    redisCommands: (statsAfter.calls - stats.calls) / stored,
    scriptUs: (statsAfter.scriptUs - stats.scriptUs) / stored,
    redisCpuUs: ((redisCpuAfter - redisCpu) * 1e6) / stored,
    load: os.loadavg()[0]!,
  };
}

const figure = (values: number[], digits: number): string =>
  `${round(median(values), digits)} [${spread(values, digits)}]`;

async function main(): Promise<void> {
  const builds = [await bundleEntry('test/helpers/queue/queue-gateway-process.ts'), ...process.argv.slice(2)];
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-publish-builds-'));
  // A dataDir turns on the append-only file with appendfsync everysec, as bench/queue-publish.ts's.
  const server = await startRedis({ dataDir });
  const inspect = new Redis({ host: server.host, port: server.port, password: server.password, protocol: 2 });
  const target = testQueueTarget(server, { namespace: 'bench', signingKey: SIGNING_KEY });
  const sides: Side[] = [];
  try {
    for (const [i, build] of builds.entries()) {
      const prefix = `{build${i}}:`;
      const gc = new GcCount();
      const env = {
        ...process.env,
        ...buildQueueGatewayEnv(prefix, { SETTEE_QUEUE_MAX_BATCH_SIZE: String(BATCH) }),
        SETTEE_TEST_QUEUE_TARGETS: JSON.stringify([target]),
        SETTEE_TEST_QUEUE_WORKERS: 'false',
      };
      const proc = await startSide(`build${i}`, [...GC_FLAGS, build], env, gc.onLine);
      const baseUrl = /listening (\S+)/.exec(proc.output())![1]!;
      sides.push({
        name: `${i === 0 ? 'this tree' : path.basename(build)}`,
        proc,
        gc,
        urls: {
          single: `${baseUrl}/queue/bench/db/v2/publish/${DESTINATION}`,
          batch: `${baseUrl}/queue/bench/db/v2/batch`,
        },
        stream: queueKeys(prefix).stream,
      });
    }
    if (FLOOR) {
      const gc = new GcCount();
      const floor = await startFloorQueue(
        {
          redis: { host: server.host, port: server.port, password: server.password },
          keyPrefix: '{floor}:',
          token: target.token,
          signingKey: SIGNING_KEY,
          concurrency: 0,
        },
        { flags: GC_FLAGS, onLine: gc.onLine },
      );
      // The floor has no batch route: its batch rounds are skipped.
      sides.push({
        name: 'floor',
        proc: floor.proc,
        gc,
        urls: { single: `${floor.baseUrl}/v2/publish/${DESTINATION}`, batch: '' },
        stream: queueKeys('{floor}:').stream,
      });
    }
    if (BARE) {
      const gc = new GcCount();
      const proc = await startSide(
        'bare',
        [...GC_FLAGS, '--input-type=module', '--eval', BARE_SERVER],
        process.env,
        gc.onLine,
      );
      const baseUrl = /listening (\S+)/.exec(proc.output())![1]!;
      sides.push({
        name: 'bare node:http',
        proc,
        gc,
        urls: { single: `${baseUrl}/v2/publish/${DESTINATION}`, batch: '' },
        stream: '',
      });
    }
    console.log(
      `publish builds: ${os.cpus().length} CPUs, load ${round(os.loadavg()[0]!, 1)}, ${ROUNDS} rounds of ${SECONDS} s, ${new Date().toISOString()}`,
    );
    for (const mode of MODES) {
      const measured = sides.filter((side) => side.urls[mode] !== '');
      // An uncounted second each: a process's first second runs its code cold.
      for (const side of measured) await runPublishLoad(loadOf(side, mode, target.token, 1_000));
      const rounds: Round[][] = measured.map(() => []);
      for (let r = 0; r < ROUNDS; r++) {
        const order = measured.map((_, i) => i);
        if (r % 2 === 1) order.reverse();
        for (const i of order)
          rounds[i]!.push(
            await measure(measured[i]!, loadOf(measured[i]!, mode, target.token, SECONDS * 1_000), inspect),
          );
        console.log(
          `  ${mode} round ${r + 1}: ` +
            measured
              .map((side, i) => {
                const last = rounds[i]!.at(-1)!;
                return `${side.name} ${Math.round(last.perSecond)}/s ${round(last.cpuUs, 1)} µs ${round(last.kb, 2)} KB`;
              })
              .join('; ') +
            `, load ${round(os.loadavg()[0]!, 1)}`,
        );
      }
      console.log(`${mode} (medians [spread] of ${ROUNDS} rounds, per message):`);
      for (const [i, side] of measured.entries()) {
        const of = (pick: (r: Round) => number, digits = 1) => figure(rounds[i]!.map(pick), digits);
        const ratio = rounds[i]!.map((r, j) => r.cpuUs / rounds[0]![j]!.cpuUs);
        console.log(
          `  ${side.name.padEnd(24)} ${of((r) => r.perSecond, 0)}/s  CPU ${of((r) => r.cpuUs)} µs (/ first, per round: ${figure(ratio, 3)})  heap ${of((r) => r.kb, 2)} KB  ` +
            `Redis ${of((r) => r.redisCommands, 2)} commands, scripts ${of((r) => r.scriptUs, 2)} µs, CPU ${of((r) => r.redisCpuUs)} µs  load ${of((r) => r.load)}`,
        );
      }
    }
  } finally {
    for (const side of sides) await side.proc.stop();
    inspect.disconnect();
    await server.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
