/**
 * What the orchestrator reads around each window: the CPU each group of processes used (the
 * gateway, each tenant's Redis and engine, A's load generator, B's probe, the whole machine) and
 * the gateway's event-loop delay (prom-client's histogram on its /metrics, reset by each scrape).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { cpuSeconds } from '../lib/process-usage.js';
import { runWindows, sleepUntil, type Window } from './schedule.js';

/** Pins `pids` (every thread of each) to `cpus` (a CPU, or a list such as "0-1"), as `taskset -a -p -c` does. */
export async function pinToCpu(pids: readonly number[], cpus: number | string): Promise<void> {
  // All at once: one after another, on a loaded machine, a window's first second went by before
  // A's last process moved.
  await Promise.all(
    pids.map((pid) => promisify(execFile)('taskset', ['-a', '-p', '-c', String(cpus), String(pid)])),
  );
}

/** The machine's busy CPU seconds and all CPU seconds so far, every core together (/proc/stat). */
function machineSeconds(): { busy: number; total: number; steal: number } {
  const fields = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th fields.
  // steal (the 8th): time the host ran something else while this VM's CPU had work.
  return { busy: (total - fields[3]! - fields[4]!) / 100, total: total / 100, steal: fields[7]! / 100 };
}

export interface WindowReading {
  /** Share of one core each group used in the window (%). */
  cpuPercent: Record<string, number>;
  /** The whole machine's busy share of all its cores (%), and its 1-minute load at the window's end. */
  machineBusyPercent: number;
  /** Time the host under this VM took from its CPUs in the window (ms, every CPU together). */
  stealMs: number;
  load: number;
  /** The gateway's event-loop delay in the window, beyond its timer's period: p99 and max (ms). */
  gatewayLagP99Ms: number;
  gatewayLagMaxMs: number;
}

/**
 * prom-client's event-loop histogram times a timer of this period (its eventLoopMonitoringPrecision)
 * and records the whole time between its calls, so an idle loop reads 10 ms: taken off, what is
 * left is the delay (readings before this change, 12.8 ms quiet, were 2.8 ms of delay).
 */
const LAG_RESOLUTION_MS = 10;

async function scrapeLag(metricsUrl: string): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name} ([\\d.e+-]+)`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return {
    // A window in which the timer never ran reads 0 (no sample), not -10.
    p99: Math.max(0, value('settee_gateway_nodejs_eventloop_lag_p99_seconds') - LAG_RESOLUTION_MS),
    max: Math.max(0, value('settee_gateway_nodejs_eventloop_lag_max_seconds') - LAG_RESOLUTION_MS),
  };
}

/** Reads the groups' CPU and the gateway's event-loop delay over each window of the run. */
export function monitorWindows(options: {
  startAt: number;
  windows: readonly Window[];
  groups: Record<string, readonly number[]>;
  metricsUrl: string;
}): Promise<WindowReading[]> {
  const cpu = (): Record<string, number> =>
    Object.fromEntries(
      Object.entries(options.groups).map(([group, pids]) => [
        group,
        pids.reduce((sum, pid) => {
          try {
            return sum + cpuSeconds(pid);
          } catch {
            return sum;
          }
        }, 0),
      ]),
    );
  return runWindows(options.startAt, options.windows, async (window) => {
    await scrapeLag(options.metricsUrl);
    const [cpuBefore, machineBefore, before] = [cpu(), machineSeconds(), performance.now()];
    await sleepUntil(options.startAt + window.toMs);
    const [cpuAfter, machineAfter, seconds] = [cpu(), machineSeconds(), (performance.now() - before) / 1000];
    const lag = await scrapeLag(options.metricsUrl);
    return {
      cpuPercent: Object.fromEntries(
        Object.keys(cpuAfter).map((group) => [
          group,
          ((cpuAfter[group]! - cpuBefore[group]!) / seconds) * 100,
        ]),
      ),
      machineBusyPercent:
        ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
      stealMs: (machineAfter.steal - machineBefore.steal) * 1000,
      load: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      gatewayLagP99Ms: lag.p99,
      gatewayLagMaxMs: lag.max,
    };
  });
}
