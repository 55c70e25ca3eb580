import fs from 'node:fs';
import path from 'node:path';

/**
 * The engine a kubelet stand-in started, recorded in its volume, so that a stand-in started after
 * one that was killed (SIGKILL: no handler ran, its engines outlived it as orphans) ends the
 * orphan before it starts the pod's engine again on the same data. A container runtime does the
 * same for a kubelet: containers are found again by their runtime's records, not left running
 * beside new ones (two engines on one volume: the second cannot take the data's lock and the
 * instance never comes back). Like a runtime's record, it holds the container's start time to the
 * millisecond (a pod's own timestamps are whole seconds): bench/cold-start.ts reads it.
 */
export const ENGINE_PID_FILE = '.settee-engine.pid';

/** What the file holds. */
export interface EnginePidRecord {
  pid: number;
  /** The process's start time in clock ticks since boot: a pid reused by another process does not match. */
  startTicks: number;
  /** When it was spawned, in ms since the epoch (fractional). */
  spawnedAtMs: number;
}

/**
 * Written when the process is spawned, synchronously: two small local reads and writes, which on a
 * loaded machine finish sooner than a thread-pool round trip each would be handed back, and the
 * record is there before anything else the stand-in does for the new container.
 */
export function recordEnginePid(folder: string, pid: number, spawnedAtMs: number): void {
  const startTicks = startTimeOf(pid);
  if (startTicks === undefined) return;
  fs.writeFileSync(path.join(folder, ENGINE_PID_FILE), `${pid} ${startTicks} ${spawnedAtMs.toFixed(3)}\n`);
}

/** The record a file holds, if it parses. */
export function parseEnginePidRecord(recorded: string): EnginePidRecord | undefined {
  const [pid, startTicks, spawnedAtMs] = recorded.trim().split(' ').map(Number);
  if (!pid || startTicks === undefined || Number.isNaN(startTicks)) return undefined;
  // Files of a stand-in from before the spawn time was recorded hold two fields.
  return { pid, startTicks, spawnedAtMs: spawnedAtMs ?? Number.NaN };
}

/** Kills (SIGKILL) the engine recorded in `folder` if that very process still runs; true if it did. */
export async function killLeftoverEngine(folder: string): Promise<boolean> {
  // Synchronous: it is on the wake path before every spawn (see recordEnginePid), and the file is
  // almost always absent or names an engine that has ended.
  const file = path.join(folder, ENGINE_PID_FILE);
  let recorded = '';
  try {
    recorded = fs.readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  fs.rmSync(file, { force: true });
  const record = parseEnginePidRecord(recorded);
  if (!record || startTimeOf(record.pid) !== record.startTicks) return false;
  const { pid, startTicks } = record;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return false;
  }
  // Gone once /proc no longer lists it (or lists a zombie its new parent has not reaped yet).
  for (let i = 0; i < 100 && startTimeOf(pid) === startTicks && !isZombie(pid); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return true;
}

function procStat(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
}

function startTimeOf(pid: number): number | undefined {
  const stat = procStat(pid);
  if (!stat) return undefined;
  // Fields after the command name (in parentheses, which may hold spaces); starttime is field 22.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

function isZombie(pid: number): boolean {
  const stat = procStat(pid);
  return !stat || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}
