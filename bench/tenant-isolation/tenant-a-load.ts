/**
 * Tenant A's load generator, a process of its own, so nothing of A's sending runs on B's event loop: in each of its windows it sends at
 * its limits or floods. It prints "ready" once loaded, waits for the run's start time and prints
 * what it sent per window.
 */
import type { ManagedProcess } from '../../local/process.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';
import { runWindows, waitForStart, type Window } from './schedule.js';
import { atItsLimits, flood, type SentTally, type Tenant } from './tenant-load.js';

export interface TenantALoadSpec {
  a: Tenant;
  windows: Window[];
  /** The file the orchestrator writes the run's start time (epoch ms) to. */
  startFile: string;
  floodConnections: number;
}

/** What A sent in each window that is its own (index into the spec's windows). */
export interface TenantALoadResult {
  sent: Array<SentTally & { window: number }>;
}

async function run(spec: TenantALoadSpec): Promise<TenantALoadResult> {
  console.log(`ready ${process.pid}`);
  const startAt = await waitForStart(spec.startFile);
  const own = spec.windows.map((window, index) => ({ ...window, index })).filter((w) => w.phase !== 'alone');
  const sent = await runWindows(startAt, own, async (window, stop) => {
    const tally =
      window.phase === 'A floods'
        ? await flood(spec.a, spec.floodConnections, stop)
        : await atItsLimits(spec.a, stop);
    return { ...tally, window: window.index };
  });
  return { sent };
}

serveLoadProcess(import.meta.url, run);

/**
 * Tenant A's load in its own process; `onStart` with the process once started (to stop it on
 * failure), `onReady` with its pid once it waits for the start time.
 */
export function runTenantALoad(
  spec: TenantALoadSpec,
  onReady: (pid: number) => void,
  onStart: (proc: ManagedProcess) => void,
): Promise<TenantALoadResult> {
  return runLoadProcess<TenantALoadSpec, TenantALoadResult>('bench/tenant-isolation/tenant-a-load.ts', spec, {
    onLine: (line) => {
      const ready = /^ready (\d+)$/.exec(line);
      if (ready) onReady(Number(ready[1]));
    },
    onStart,
  });
}
