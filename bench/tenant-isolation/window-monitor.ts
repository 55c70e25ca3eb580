/**
 * What the orchestrator reads around each window: the CPU each group of processes used (the
 * gateway, each tenant's Redis and engine, A's load generator, B's probe, the whole machine) and
 * the gateway's event-loop delay (prom-client's histogram on its /metrics, reset by each scrape).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { cpuSeconds, mainThreadMs } from '../lib/process-usage.js';
import { runWindows, sleepUntil, type Window } from './schedule.js';

/** Pins `pids` (every thread of each) to `cpus` (a CPU, or a list such as "0-1"), as `taskset -a -p -c` does. */
export async function pinToCpu(pids: readonly number[], cpus: number | string): Promise<void> {
  // All at once: one after another, on a loaded machine, a window's first second went by before
  // A's last process moved.
  await Promise.all(
    pids.map((pid) => promisify(execFile)('taskset', ['-a', '-p', '-c', String(cpus), String(pid)])),
  );
}

/**
 * The busy CPU seconds and all CPU seconds so far of the whole machine (every core together) or
 * of one CPU (/proc/stat's `cpu` or `cpu<N>` line).
 */
function machineSeconds(cpu: number | '' = ''): { busy: number; total: number; steal: number } {
  const fields = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((line) => line.startsWith(`cpu${cpu} `))!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th fields.
  // steal (the 8th): time the host ran something else while this VM's CPU had work.
  return { busy: (total - fields[3]! - fields[4]!) / 100, total: total / 100, steal: fields[7]! / 100 };
}

/** What the gateway's event loop got of its CPU in a window, and who else used that CPU. */
export interface SharedCpuReading {
  /** Share of the window (%) the gateway's main thread ran, and was ready but waited for a CPU. */
  loopRanPercent: number;
  loopWaitedPercent: number;
  /** Share of one core (%) the gateway's other threads used (V8's GC helpers, libuv's pool). */
  helperThreadsPercent: number;
  /**
   * Share of the gateway's CPU (%) used by everything outside the groups pinned to it (other
   * engineers' processes the kernel moved there, the kernel itself); meaningful only in windows
   * where no other group of the bench is moved onto that CPU.
   */
  outsidersPercent: number;
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
  sharedCpu: SharedCpuReading;
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
  /** The gateway's process, its CPU and the groups pinned there beside it. */
  gateway: { pid: number; cpu: number; pinnedGroups: readonly string[] };
}): Promise<WindowReading[]> {
  const { gateway } = options;
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
    const reads = () => ({
      cpu: cpu(),
      machine: machineSeconds(),
      sharedCpu: machineSeconds(gateway.cpu),
      loop: mainThreadMs(gateway.pid),
      // The main thread's own CPU (utime + stime of its task), beside the whole process's.
      loopCpu: cpuSeconds(gateway.pid, gateway.pid),
      at: performance.now(),
    });
    const before = reads();
    await sleepUntil(options.startAt + window.toMs);
    const after = reads();
    const [cpuBefore, cpuAfter, machineBefore, machineAfter] = [
      before.cpu,
      after.cpu,
      before.machine,
      after.machine,
    ];
    const seconds = (after.at - before.at) / 1000;
    const lag = await scrapeLag(options.metricsUrl);
    const cpuPercent = Object.fromEntries(
      Object.keys(cpuAfter).map((group) => [group, ((cpuAfter[group]! - cpuBefore[group]!) / seconds) * 100]),
    );
    const sharedBusyPercent = ((after.sharedCpu.busy - before.sharedCpu.busy) / seconds) * 100;
    const pinnedPercent = gateway.pinnedGroups.reduce((sum, group) => sum + cpuPercent[group]!, 0);
    return {
      cpuPercent,
      machineBusyPercent:
        ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
      stealMs: (machineAfter.steal - machineBefore.steal) * 1000,
      load: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      gatewayLagP99Ms: lag.p99,
      gatewayLagMaxMs: lag.max,
      sharedCpu: {
        loopRanPercent: (after.loop.ran - before.loop.ran) / 10 / seconds,
        loopWaitedPercent: (after.loop.waited - before.loop.waited) / 10 / seconds,
        helperThreadsPercent: cpuPercent.gateway! - ((after.loopCpu - before.loopCpu) / seconds) * 100,
        outsidersPercent: Math.max(0, sharedBusyPercent - pinnedPercent),
      },
    };
  });
}
