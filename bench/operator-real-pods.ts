/**
 * The operator at scale with real pods and claims: N CouchInstances applied at once to a fresh
 * control plane where the real StatefulSet controller makes each pod and its claim, the real
 * scheduler binds it, the local provisioner binds the claim to a folder, and the kubelet stand-in
 * runs its engine (a pouchdb-server process per pod) until it answers the readiness probe. Per
 * scale: the time from the first create until every instance says Running, the operator's peak
 * RSS, and what each pod costs the machine (the engines' proportional memory, the stand-in's RSS).
 * Each scale runs BENCH_REPEATS times on a fresh plane; medians with the min-max spread.
 *
 *   npx tsx bench/operator-real-pods.ts   (BENCH_SCALES=25,50,100 BENCH_REPEATS=3 BENCH_MIN_AVAILABLE_GB=6)
 *
 * 500 engine processes (about 17 GB) do not fit next to other work on this machine, so the issue's
 * 500 is extrapolated from the scales that fit: a least-squares line through the medians (time and
 * operator RSS grow with N), printed with the fit's points so the reader can judge it.
 *
 * Bounded: MemAvailable is sampled every 500 ms and a run stops (and the bench fails) when it falls
 * under BENCH_MIN_AVAILABLE_GB; a scale whose projected engine memory would take the machine under
 * that bound is not started; every run has a deadline (BENCH_RUN_TIMEOUT_S, 300).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { getFreePort } from '../local/ports.js';
import type { ManagedProcess } from '../local/process.js';
import { waitFor } from '../local/wait.js';
import { createCouchInstance } from '../test/helpers/gateway/gateway-harness.js';
import { startBenchCluster } from './lib/bench-cluster.js';
import { compilePlatform, type CompiledPlatform } from './lib/compiled-platform.js';
import { watchInstancesReaching } from './lib/instance-watch.js';
import { inPool } from './lib/pool.js';
import { startTsProcess } from './lib/processes.js';
import { childPids, commandLine, memAvailableGb, peakRssMb, pssMb, rssMb } from './lib/proc-memory.js';
import { medianSpread, quantile, round } from './lib/stats.js';

const NAMESPACE = 'bench';
const SCALES = (process.env.BENCH_SCALES ?? '25,50,100').split(',').map(Number);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const MIN_AVAILABLE_GB = Number(process.env.BENCH_MIN_AVAILABLE_GB ?? 6);
const RUN_TIMEOUT_MS = Number(process.env.BENCH_RUN_TIMEOUT_S ?? 300) * 1000;
const CREATE_CONCURRENCY = Number(process.env.BENCH_CREATE_CONCURRENCY ?? 25);
/** Until a run has measured it: an engine's proportional memory, with room for the stand-in's share. */
const ASSUMED_MB_PER_POD = 90;

interface RunResult {
  instances: number;
  /** First create -> every instance's status.phase Running. */
  allRunningMs: number;
  /** Per instance, its create returning -> its phase Running. */
  perInstanceMs: number[];
  operatorPeakRssMb: number;
  standInPeakRssMb: number;
  /** Sum of the engines' PSS at the end, per pod. */
  enginePssMbPerPod: number;
  /** The lowest MemAvailable seen during the run. */
  minAvailableGb: number;
}

class MemoryBoundError extends Error {
  constructor(availableGb: number) {
    super(
      `MemAvailable fell to ${availableGb.toFixed(1)} GB, under BENCH_MIN_AVAILABLE_GB=${MIN_AVAILABLE_GB}: run stopped`,
    );
  }
}

/** Samples the machine and the stand-in while a run goes; `tripped` rejects under the memory bound. */
function startSampler(standIn: ManagedProcess) {
  let minAvailableGb = Infinity;
  let standInPeakMb = 0;
  let tripReject!: (err: Error) => void;
  const tripped = new Promise<never>((_, reject) => (tripReject = reject));
  tripped.catch(() => undefined);
  const timer = setInterval(() => {
    void (async () => {
      const available = await memAvailableGb();
      minAvailableGb = Math.min(minAvailableGb, available);
      standInPeakMb = Math.max(standInPeakMb, await rssMb(standIn.pid).catch(() => 0));
      if (available < MIN_AVAILABLE_GB) tripReject(new MemoryBoundError(available));
    })();
  }, 500);
  return {
    tripped,
    stop: () => clearInterval(timer),
    minAvailableGb: () => minAvailableGb,
    standInPeakMb: () => standInPeakMb,
  };
}

async function oneRun(compiled: CompiledPlatform, count: number): Promise<RunResult> {
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const { plane, kubeConfig } = await startBenchCluster(NAMESPACE);
    stops.push(() => plane.stop());
    const dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-pods-'));
    stops.push(() => fs.rm(dataRoot, { recursive: true, force: true }));
    const common = {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      SETTEE_WATCH_NAMESPACE: NAMESPACE,
      SETTEE_LOG_LEVEL: 'warn',
    };
    const metricsPort = await getFreePort();
    const operator = compiled.start('operator', {
      ...common,
      SETTEE_LEADER_ELECTION: 'false',
      // Hundreds of free instances in one namespace: the free-instance limit would hold all but 5.
      SETTEE_FREE_INSTANCES_PER_NAMESPACE: '1000000',
      SETTEE_METRICS_PORT: String(metricsPort),
    });
    stops.unshift(() => operator.stop());
    const standIn = startTsProcess('kubelet-stand-in', 'local/kubelet-stand-in/main.ts', [], {
      env: {
        ...common,
        SETTEE_KUBELET_DATA_DIR: dataRoot,
      },
    });
    // Before the operator: the stand-in stops its engines, then the pods may go.
    stops.unshift(() => standIn.stop(30_000));
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await waitFor(
      'the stand-in node to be Ready and the operator to serve metrics',
      async () => {
        const nodes = await core.listNode();
        const ready = nodes.items.some((n) =>
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.ok);
        return ready && metrics ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, abort: Promise.race([operator.exited, standIn.exited]) },
    );

    const names = Array.from({ length: count }, (_, i) => `pod-${String(i).padStart(4, '0')}`);
    const createdAt = new Map<string, number>();
    const watch = await watchInstancesReaching(
      kubeConfig,
      NAMESPACE,
      count,
      (instance) => instance.status?.phase === 'Running',
    );
    stops.unshift(async () => watch.stop());
    const sampler = startSampler(standIn);
    stops.unshift(async () => sampler.stop());
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`not all Running within ${RUN_TIMEOUT_MS / 1000} s`)),
        RUN_TIMEOUT_MS,
      );
    });
    stops.unshift(async () => clearTimeout(timer));
    const started = Date.now();
    const creating = inPool(names, CREATE_CONCURRENCY, async (name) => {
      // Longer than any run: no instance may hibernate while the others start.
      await createCouchInstance(
        kubeConfig,
        { namespace: NAMESPACE, name },
        { hibernation: { idleAfter: '1h' } },
      );
      createdAt.set(name, Date.now());
    });
    const abort = Promise.race([
      sampler.tripped,
      deadline,
      operator.exited.then((code) => Promise.reject(new Error(`the operator exited (${code})`))),
      standIn.exited.then((code) => Promise.reject(new Error(`the stand-in exited (${code})`))),
    ]);
    await Promise.race([creating, abort]);
    const runningAt = await Promise.race([watch.reached, abort]);
    const allRunningMs = Math.max(...runningAt.values()) - started;

    // The stand-in's children are its engines and tsx's esbuild service.
    const children = await childPids(standIn.pid);
    const commands = await Promise.all(children.map((pid) => commandLine(pid).catch(() => '')));
    const engines = children.filter((_, i) => commands[i]?.includes('pouchdb-stand-in-server'));
    if (engines.length !== count)
      throw new Error(`${count} instances Running but the stand-in runs ${engines.length} engines`);
    const enginePss = (await Promise.all(engines.map((pid) => pssMb(pid)))).reduce((a, b) => a + b, 0);
    return {
      instances: count,
      allRunningMs,
      perInstanceMs: names.map((name) => (runningAt.get(name) ?? NaN) - (createdAt.get(name) ?? NaN)),
      operatorPeakRssMb: await peakRssMb(operator.pid),
      standInPeakRssMb: Math.max(sampler.standInPeakMb(), await peakRssMb(standIn.pid)),
      enginePssMbPerPod: enginePss / count,
      minAvailableGb: sampler.minAvailableGb(),
    };
  } finally {
    for (const stop of stops) await stop().catch((err: unknown) => console.error(err));
  }
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

/** The report's shape of a median and its spread (min and max as fields of their own). */
function spread(values: readonly number[], digits = 0): Spread {
  const {
    median,
    spread: [min, max],
  } = medianSpread(values, digits);
  return { median, min, max };
}

/** Least-squares line through (x, y), and its value at `at`. */
function linearFit(points: readonly [number, number][], at: number) {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const slope = sxx === 0 ? 0 : points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / sxx;
  const intercept = my - slope * mx;
  return {
    intercept: round(intercept, 1),
    slopePerInstance: round(slope, 3),
    at,
    value: round(intercept + slope * at, 1),
  };
}

async function main(): Promise<void> {
  // Compiled, as the image runs it: tsx's loader alone would add about 90 MB to the operator's RSS.
  const compiled = await compilePlatform();
  const report: Record<string, unknown>[] = [];
  const medians: { n: number; seconds: number; operatorMb: number; podMb: number }[] = [];
  let mbPerPod = ASSUMED_MB_PER_POD;
  try {
    for (const count of SCALES) {
      const available = await memAvailableGb();
      const projectedGb = (count * mbPerPod) / 1024;
      if (available - projectedGb < MIN_AVAILABLE_GB) {
        console.log(
          `==> ${count} instances: not run: ${count} pods x ${round(mbPerPod)} MB = ${projectedGb.toFixed(1)} GB ` +
            `would leave ${(available - projectedGb).toFixed(1)} GB of ${available.toFixed(1)} GB available, under ${MIN_AVAILABLE_GB} GB`,
        );
        continue;
      }
      const runs: RunResult[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const run = await oneRun(compiled, count);
        runs.push(run);
        mbPerPod = Math.max(mbPerPod * 0.5, run.enginePssMbPerPod + run.standInPeakRssMb / count);
        console.log(
          `==> ${count} instances, run ${i + 1}: all Running in ${(run.allRunningMs / 1000).toFixed(1)} s, ` +
            `operator peak RSS ${run.operatorPeakRssMb.toFixed(0)} MB, stand-in peak RSS ${run.standInPeakRssMb.toFixed(0)} MB, ` +
            `engine PSS ${run.enginePssMbPerPod.toFixed(1)} MB/pod, lowest MemAvailable ${run.minAvailableGb.toFixed(1)} GB`,
        );
      }
      const perInstance = runs.flatMap((r) => r.perInstanceMs);
      const allRunningS = spread(
        runs.map((r) => r.allRunningMs / 1000),
        1,
      );
      const operatorMb = spread(runs.map((r) => r.operatorPeakRssMb));
      const podMb = spread(
        runs.map((r) => r.enginePssMbPerPod),
        1,
      );
      medians.push({
        n: count,
        seconds: allRunningS.median,
        operatorMb: operatorMb.median,
        podMb: podMb.median,
      });
      report.push({
        instances: count,
        runs: runs.length,
        allRunningSeconds: allRunningS,
        secondsPerInstance: round(allRunningS.median / count, 3),
        perInstanceCreateToRunningMs: {
          p50: round(quantile(perInstance, 0.5)),
          p99: round(quantile(perInstance, 0.99)),
        },
        operatorPeakRssMb: operatorMb,
        standInPeakRssMb: spread(runs.map((r) => r.standInPeakRssMb)),
        enginePssMbPerPod: podMb,
        lowestMemAvailableGb: round(Math.min(...runs.map((r) => r.minAvailableGb)), 1),
      });
    }
  } finally {
    await compiled.remove();
  }
  const extrapolation =
    medians.length >= 2
      ? {
          note: 'least-squares line through the medians of the scales run (value = intercept + slope x N), evaluated at N = 500; engines: 500 x the largest scale median PSS per pod',
          allRunningSeconds: linearFit(
            medians.map((m) => [m.n, m.seconds]),
            500,
          ),
          operatorPeakRssMb: linearFit(
            medians.map((m) => [m.n, m.operatorMb]),
            500,
          ),
          enginesGb: round((500 * (medians.at(-1)?.podMb ?? NaN)) / 1024, 1),
        }
      : 'needs two scales';
  console.log(JSON.stringify({ scales: report, extrapolationTo500: extrapolation }, null, 2));
}

await main();
