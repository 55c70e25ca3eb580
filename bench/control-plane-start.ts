/**
 * Control-plane start-up with cached binaries (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler, then the CRDs, the StorageClass and the wait until the controllers run), side by
 * side in one run, alternating: the tests' plane (etcd on tmpfs, fresh each time), make run's first
 * start (etcd data on disk, fresh folder) and make run's restart (the same etcd folder again, as
 * after a restart of `make run`). Each start's steps are timed from its progress messages. Medians,
 * p99 and the spread (min-max), and each start as a ratio to the tests' median.
 *
 *   npx tsx bench/control-plane-start.ts        (BENCH_STARTS=5 of each)
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../local/control-plane.js';
import { median, minMax, quantile, round } from './lib/stats.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 5);

type Variant = 'tests (tmpfs etcd)' | 'make run, first start' | 'make run, restart';

interface Start {
  totalMs: number;
  /** Milliseconds from the start to each progress message. */
  steps: Record<string, number>;
}

async function timeStart(options: { etcdDataDir?: string }): Promise<Start> {
  const steps: Record<string, number> = {};
  const started = performance.now();
  const plane = await startControlPlane({
    ...options,
    log: (message) => (steps[message.replace(/ at https.*$/, '')] = round(performance.now() - started)),
  });
  const totalMs = performance.now() - started;
  await plane.stop();
  return { totalMs, steps };
}

function summary(starts: readonly Start[], baselineMedian: number) {
  const totals = starts.map((s) => s.totalMs);
  return {
    medianMs: round(median(totals)),
    p99Ms: round(quantile(totals, 0.99)),
    spreadMs: minMax(totals),
    ratioToTestsMedian: round(median(totals) / baselineMedian, 2),
    stepsOfMedianStart: [...starts].sort((a, b) => a.totalMs - b.totalMs)[Math.floor(starts.length / 2)]
      ?.steps,
  };
}

async function main(): Promise<void> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-plane-'));
  const results: Record<Variant, Start[]> = {
    'tests (tmpfs etcd)': [],
    'make run, first start': [],
    'make run, restart': [],
  };
  try {
    // One uncounted start: the first exec of each binary pays for the page cache.
    await timeStart({});
    for (let i = 0; i < STARTS; i++) {
      results['tests (tmpfs etcd)'].push(await timeStart({}));
      const etcdDataDir = path.join(root, `etcd-${i}`);
      results['make run, first start'].push(await timeStart({ etcdDataDir }));
      results['make run, restart'].push(await timeStart({ etcdDataDir }));
      console.log(
        `    start ${i + 1}: ${Object.entries(results)
          .map(([variant, starts]) => `${variant} ${round(starts[i]?.totalMs ?? Number.NaN)} ms`)
          .join('; ')}`,
      );
    }
    const baseline = median(results['tests (tmpfs etcd)'].map((s) => s.totalMs));
    const report = Object.fromEntries(
      Object.entries(results).map(([variant, starts]) => [variant, summary(starts, baseline)]),
    );
    console.log(
      JSON.stringify(
        { starts: STARTS, loadAverage: os.loadavg().map((l) => round(l, 1)), ...report },
        null,
        2,
      ),
    );
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

await main();
