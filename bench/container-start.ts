/**
 * A container's start as the kubelet stand-in makes it (docs/cold-start.md, "the start step"):
 * spawning the program from a Node process of the stand-in's size (startProcess: a fork of the
 * whole process, then its exec) against telling a process forked ahead to exec it
 * (ProcessLauncher), alternating, from a process of the stand-in's make (under tsx, with
 * @kubernetes/client-node loaded: about 200 MB resident, as the stand-in). The program is /bin/date, which
 * prints its own clock as it runs. For each: how long the start call held the event loop, and the
 * time from the call to the program running (its clock against this process's). Medians and p90.
 *
 *   npx tsx bench/container-start.ts        (BENCH_STARTS=40)
 */
import os from 'node:os';
import { ProcessLauncher } from '../local/process-launcher.js';
import { startProcess, type ManagedProcess, type StartProcessOptions } from '../local/process.js';
import { quantile, round } from './lib/stats.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 40);
// Between starts, long enough for the launcher to have forked its next process.
const PAUSE_MS = 150;

interface Sample {
  callMs: number;
  toRunningMs: number;
}

async function sample(start: (options: StartProcessOptions) => ManagedProcess): Promise<Sample> {
  const calledAt = performance.timeOrigin + performance.now();
  const proc = start({ name: 'date', command: '/bin/date', args: ['+%s%N'] });
  const callMs = performance.timeOrigin + performance.now() - calledAt;
  const exit = await proc.exited;
  if (exit !== 0) throw new Error(`date exited ${exit}: ${proc.output()}`);
  const ranAtMs = Number(BigInt(proc.output().trim()) / 1000n) / 1000;
  return { callMs, toRunningMs: ranAtMs - calledAt };
}

function summary(samples: readonly Sample[]): Record<string, { p50: number; p90: number }> {
  const of = (values: number[]) => ({
    p50: round(quantile(values, 0.5), 2),
    p90: round(quantile(values, 0.9), 2),
  });
  return {
    startCallMs: of(samples.map((s) => s.callMs)),
    callToRunningMs: of(samples.map((s) => s.toRunningMs)),
  };
}

// What makes the stand-in's size: a fork copies the page tables of all of it.
await import('@kubernetes/client-node');
const launcher = new ProcessLauncher({ refillAfterMs: PAUSE_MS / 3 });
const spawned: Sample[] = [];
const launched: Sample[] = [];
const loadBefore = os.loadavg()[0] ?? 0;
try {
  await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  for (let i = 0; i < STARTS; i++) {
    spawned.push(await sample(startProcess));
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    launched.push(await sample((options) => launcher.start(options)));
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
} finally {
  launcher.close();
}
const rssMb = round(process.memoryUsage().rss / 1024 / 1024);
console.log(
  JSON.stringify(
    {
      starts: STARTS,
      rssMb,
      loadAverage: [round(loadBefore, 1), round(os.loadavg()[0] ?? 0, 1)],
      spawn: summary(spawned),
      launcher: summary(launched),
    },
    null,
    2,
  ),
);
