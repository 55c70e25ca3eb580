/**
 * The hybrid gateway (SETTEE_GATEWAY_FAST_PATH=true) on its own, against the anchors it is judged
 * by, in a few minutes instead of bench/gateway-proxy.ts's six: the added latency on one
 * connection (the minimal upstream direct, through the splice experiment, through the hybrid) and
 * the engine's throughput through the hybrid and the experiment against direct. With BENCH_BASELINE_ROOT (another
 * checkout, e.g. a worktree of main) its build runs beside this tree's as `baseline`, both loaded
 * in the same alternating rounds: a change to the data path measured side by side.
 * BENCH_CPU_PROF=<dir> writes each gateway's V8 CPU profile there (--cpu-prof, at its exit).
 * BENCH_GATEWAY_MEMORY_MB starts each gateway in a memory cgroup of its own with that limit (the chart's is
 * 512), as in its pod: Node sizes V8's heap from it (bench/lib/memory-cgroup.ts; root, cgroup v1).
 * BENCH_HYBRID_NODE_FLAGS are node flags for this tree's gateway only: with BENCH_BASELINE_ROOT
 * naming this same tree, a flag (e.g. `--max-semi-space-size=8 --min-semi-space-size=8`) is
 * measured side by side. Each gateway's resident memory at the end is reported.
 *
 *   npx tsx bench/gateway-hybrid.ts   (BENCH_ROUNDS=5, BENCH_SECONDS=3, BENCH_CONNECTIONS=50,
 *                                      BENCH_ENGINE=true, BENCH_IDLE_SECONDS=10, BENCH_BASELINE_ROOT,
 *                                      BENCH_CPU_PROF, BENCH_GATEWAY_MEMORY_MB, BENCH_HYBRID_NODE_FLAGS)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getFreePort } from '../local/ports.js';
import { basicAuth } from '../test/helpers/gateway/http-request.js';
import { startDataPathSetup } from './gateway/data-path-setup.js';
import { runLoad, type LoadResult } from './gateway/load-generator.js';
import { summarize, type Target } from './gateway/load-rounds.js';
import { seedBenchDocument } from './lib/bench-cluster.js';
import { compilePlatform, type CompiledPlatform } from './lib/compiled-platform.js';
import { createMemoryCgroup } from './lib/memory-cgroup.js';
import { rssMb } from './lib/proc-memory.js';
import { startTsProcess, waitForHttp } from './lib/processes.js';
import type { ManagedProcess } from '../local/process.js';
import { medianSpread, type MedianSpread } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ENGINE = process.env.BENCH_ENGINE !== 'false';
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT;
const CPU_PROF = process.env.BENCH_CPU_PROF;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const MEMORY_MB = process.env.BENCH_GATEWAY_MEMORY_MB
  ? Number(process.env.BENCH_GATEWAY_MEMORY_MB)
  : undefined;
const HYBRID_FLAGS = (process.env.BENCH_HYBRID_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
const NAMESPACE = 'bench';

async function main(): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    const loadBefore = os.loadavg();
    const { plane, upstreamPort, upstreamPid, engine, admin, routes } = await startDataPathSetup(stops, {
      namespace: NAMESPACE,
      engine: ENGINE,
    });

    console.log('==> gateways (compiled as in the production image)');
    const builds: Array<[string, CompiledPlatform]> = [['hybrid', await compilePlatform()]];
    if (BASELINE_ROOT) builds.push(['baseline', await compilePlatform(path.resolve(BASELINE_ROOT))]);
    const gateways: Array<[string, string, number]> = [];
    for (const [name, compiled] of builds) {
      stops.push(() => compiled.remove());
      // One cgroup per gateway: each gets the limit its own pod has, not a share of one.
      const cgroup =
        MEMORY_MB === undefined
          ? undefined
          : createMemoryCgroup(`bench-gateway-${process.pid}-${name}`, MEMORY_MB * 2 ** 20);
      if (cgroup !== undefined) stops.push(async () => cgroup.remove());
      const port = await getFreePort();
      const start = cgroup === undefined ? (spawn: () => ManagedProcess) => spawn() : cgroup.startInside;
      const gateway = start(() =>
        compiled.start(
          'gateway',
          {
            ...process.env,
            KUBECONFIG: plane.kubeconfigPath,
            SETTEE_GATEWAY_PORT: String(port),
            SETTEE_WATCH_NAMESPACE: NAMESPACE,
            SETTEE_LOG_LEVEL: 'warn',
            SETTEE_GATEWAY_FAST_PATH: 'true',
            SETTEE_GATEWAY_FREE_READS_PER_SECOND: '1000000',
            SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '1000000',
            SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '1000000',
          },
          [...cpuProfileFlags(name), ...(name === 'hybrid' ? HYBRID_FLAGS : [])],
        ),
      );
      stops.push(() => gateway.stop());
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(`${url}/db/${NAMESPACE}/fast/_up`, `the ${name} gateway`, 200, gateway.exited);
      gateways.push([name, url, gateway.pid]);
    }

    const splicePort = await getFreePort();
    const splice = startTsProcess(
      'splice-proxy-experiment',
      'bench/gateway/splice-proxy-experiment.ts',
      [String(splicePort), ...routes.map(([name, port]) => `${NAMESPACE}/${name}=${port}`)],
      { flags: cpuProfileFlags('splice') },
    );
    stops.push(() => splice.stop());
    const spliceUrl = `http://127.0.0.1:${splicePort}`;
    await waitForHttp(`${spliceUrl}/db/${NAMESPACE}/fast/_up`, 'the splice experiment', 200, splice.exited);

    // What each process costs with no load (informers, timers, GC of its heap): per second of
    // idleness, it is spread over the requests of a loaded second too.
    const idle = await idleCpu([
      ['splice', splice.pid],
      ...gateways.map(([name, , pid]): [string, number] => [name, pid]),
    ]);
    console.log(`==> added latency on one connection: ${ROUNDS} alternating rounds of ${SECONDS}s`);
    const latency = await rounds(
      [
        { name: 'direct', url: `http://127.0.0.1:${upstreamPort}/`, pid: upstreamPid },
        { name: 'splice', url: `${spliceUrl}/db/${NAMESPACE}/fast/`, pid: splice.pid },
        ...gateways.map(([name, url, pid]) => ({ name, url: `${url}/db/${NAMESPACE}/fast/`, pid })),
      ],
      1,
    );
    const report: Record<string, unknown> = {
      machine: { cpus: os.cpus().length, loadAverage: { before: loadBefore } },
      rounds: ROUNDS,
      secondsPerRun: SECONDS,
      addedP50Us: added(latency.results, 'p50'),
      addedP99Us: added(latency.results, 'p99'),
      idleCpuMsPerSecond: idle,
      oneConnection: sumUp(latency),
    };

    if (engine) {
      console.log(`==> the engine at ${CONNECTIONS} connections, direct and through the gateways`);
      const auth = basicAuth(admin.username, admin.password);
      await seedBenchDocument(engine.url, auth);
      const headers = { Authorization: auth };
      const engineLoad = await rounds(
        [
          { name: 'direct', url: `${engine.url}/bench/doc`, headers, pid: engine.pid },
          {
            name: 'splice',
            url: `${spliceUrl}/db/${NAMESPACE}/engine/bench/doc`,
            headers,
            pid: splice.pid,
          },
          ...gateways.map(([name, url, pid]) => ({
            name,
            url: `${url}/db/${NAMESPACE}/engine/bench/doc`,
            headers,
            pid,
          })),
        ],
        CONNECTIONS,
      );
      report.engine = sumUp(engineLoad);
      report.engineOverDirect = Object.fromEntries(
        ['splice', ...gateways.map(([name]) => name)].map((name) => [
          name,
          ratios(engineLoad.results, name, 'direct', (r) => r.rps),
        ]),
      );
    }
    report.gatewayRssMb = Object.fromEntries(
      await Promise.all(gateways.map(async ([name, , pid]) => [name, Math.round(await rssMb(pid))] as const)),
    );
    report.gatewaySettings = { memoryLimitMb: MEMORY_MB ?? 'none', hybridNodeFlags: HYBRID_FLAGS };
    (report.machine as { loadAverage: Record<string, number[]> }).loadAverage.after = os.loadavg();
    console.log(JSON.stringify(report, null, 2));
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error(err));
  }
}

/** Node's flags for a V8 CPU profile of the process `name`, written at its exit, when BENCH_CPU_PROF is set. */
function cpuProfileFlags(name: string): string[] {
  return CPU_PROF ? [`--cpu-prof`, `--cpu-prof-dir=${path.join(CPU_PROF, name)}`] : [];
}

/** CPU time per request answered, in microseconds: the process's user and system parts. */
interface CpuPerRequest {
  user: number;
  system: number;
}

/** A process's CPU time so far in microseconds, user and system (fields 14 and 15 of /proc/<pid>/stat, 100 Hz ticks). */
function cpuTimes(pid: number): CpuPerRequest {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 };
}

/**
 * Alternating rounds over the targets (each round runs every one back to back): the load results
 * and, for a target with a pid, that process's CPU time per request answered (from /proc: less
 * swayed than latency by other work on a shared machine; the warm-up's requests are in the time
 * but not in the count, every target alike).
 */
async function rounds(
  targets: Array<Target & { pid?: number }>,
  connections: number,
): Promise<{ results: Map<string, LoadResult[]>; cpu: Map<string, CpuPerRequest[]> }> {
  const results = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  const cpu = new Map<string, CpuPerRequest[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      const before = target.pid === undefined ? undefined : cpuTimes(target.pid);
      const result = await runLoad({
        url: target.url,
        connections,
        durationMs: SECONDS * 1000,
        warmupMs: 500,
        ...(target.headers ? { headers: target.headers } : {}),
      });
      results.get(target.name)?.push(result);
      if (target.pid === undefined || before === undefined) continue;
      const after = cpuTimes(target.pid);
      const list = cpu.get(target.name) ?? [];
      list.push({
        user: (after.user - before.user) / result.requests,
        system: (after.system - before.system) / result.requests,
      });
      cpu.set(target.name, list);
    }
  }
  return { results, cpu };
}

/** The rounds summed up: each target's load figures, CPU per request, and `hybrid` less `baseline` round by round. */
function sumUp(measured: Awaited<ReturnType<typeof rounds>>): Record<string, unknown> {
  const { results, cpu } = measured;
  const cpuOf = (list: CpuPerRequest[]): Record<string, MedianSpread> => ({
    total: medianSpread(
      list.map((c) => c.user + c.system),
      1,
    ),
    user: medianSpread(
      list.map((c) => c.user),
      1,
    ),
    system: medianSpread(
      list.map((c) => c.system),
      1,
    ),
  });
  const summed: Record<string, unknown> = {
    load: Object.fromEntries([...results].map(([name, list]) => [name, summarize(list)])),
    cpuUsPerRequest: Object.fromEntries([...cpu].map(([name, list]) => [name, cpuOf(list)])),
  };
  const hybrid = results.get('hybrid');
  const baseline = results.get('baseline');
  if (hybrid && baseline) {
    const less = (figure: (r: LoadResult) => number): MedianSpread =>
      medianSpread(hybrid.map((r, i) => figure(r) - figure(baseline[i] as LoadResult)));
    const cpuLess = (figure: (c: CpuPerRequest) => number): MedianSpread => {
      const h = cpu.get('hybrid') ?? [];
      const b = cpu.get('baseline') ?? [];
      return medianSpread(
        h.map((c, i) => figure(c) - figure(b[i] as CpuPerRequest)),
        1,
      );
    };
    summed.hybridLessBaseline = {
      rps: less((r) => r.rps),
      p50Us: less((r) => r.latencyUs.p50),
      p99Us: less((r) => r.latencyUs.p99),
      cpuUsPerRequest: cpuLess((c) => c.user + c.system),
      cpuUserUsPerRequest: cpuLess((c) => c.user),
      cpuSystemUsPerRequest: cpuLess((c) => c.system),
    };
  }
  return summed;
}

/** Each process's CPU time (user + system) over IDLE_SECONDS with no load, in ms per second. */
async function idleCpu(processes: Array<[string, number]>): Promise<Record<string, number>> {
  const total = (pid: number): number => {
    const { user, system } = cpuTimes(pid);
    return user + system;
  };
  const before = processes.map(([, pid]) => total(pid));
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  return Object.fromEntries(
    processes.map(([name, pid], i) => [name, (total(pid) - (before[i] as number)) / 1000 / IDLE_SECONDS]),
  );
}

/** Every target's added latency round by round (its figure less direct's in the same round): median and spread. */
function added(results: Map<string, LoadResult[]>, figure: 'p50' | 'p99'): Record<string, unknown> {
  const direct = results.get('direct') ?? [];
  return Object.fromEntries(
    [...results]
      .filter(([name]) => name !== 'direct')
      .map(([name, list]) => [
        name,
        medianSpread(list.map((r, i) => r.latencyUs[figure] - (direct[i]?.latencyUs[figure] ?? Number.NaN))),
      ]),
  );
}

/** One target's figure over another's, round by round: median and spread. */
function ratios(
  results: Map<string, LoadResult[]>,
  of: string,
  to: string,
  figure: (r: LoadResult) => number,
): unknown {
  const a = results.get(of) ?? [];
  const b = results.get(to) ?? [];
  return medianSpread(
    a.map((r, i) => figure(r) / figure(b[i] as LoadResult)),
    3,
  );
}

await main();
