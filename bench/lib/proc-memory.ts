/** Memory figures of processes and of the machine, from /proc (Linux). */
import fs from 'node:fs/promises';

async function statusKb(pid: number, field: string): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
}

/** Peak resident memory of a process so far (Linux's VmHWM), in MB. */
export async function peakRssMb(pid: number): Promise<number> {
  return (await statusKb(pid, 'VmHWM')) / 1024;
}

/** Resident memory of a process now (VmRSS), in MB. */
export async function rssMb(pid: number): Promise<number> {
  return (await statusKb(pid, 'VmRSS')) / 1024;
}

/**
 * A process's proportional set size, in MB: its private pages plus its share of pages it shares
 * with others (the node binary's code, mapped by every engine). The sum over processes is what
 * they take from the machine together, which the sum of their RSS overstates.
 */
export async function pssMb(pid: number): Promise<number> {
  const rollup = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? Number.NaN) / 1024;
}

/** The direct children of a process (every thread's list; Linux 3.5+). */
export async function childPids(pid: number): Promise<number[]> {
  const tasks = await fs.readdir(`/proc/${pid}/task`);
  const children = await Promise.all(
    tasks.map((tid) => fs.readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '')),
  );
  return children.flatMap((text) => text.split(' ').filter(Boolean).map(Number));
}

/** The machine's MemAvailable, in GB: what can still be allocated without swapping or reclaiming. */
export async function memAvailableGb(): Promise<number> {
  const meminfo = await fs.readFile('/proc/meminfo', 'utf8');
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(meminfo)?.[1] ?? Number.NaN) / 1024 / 1024;
}

/** A process's command line, its arguments joined by spaces. */
export async function commandLine(pid: number): Promise<string> {
  return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
}
