import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The engine a kubelet stand-in started, recorded in its volume, so that a stand-in started after
 * one that was killed (SIGKILL: no handler ran, its engines outlived it as orphans) ends the
 * orphan before it starts the pod's engine again on the same data. A container runtime does the
 * same for a kubelet: containers are found again by their runtime's records, not left running
 * beside new ones (two engines on one volume: the second cannot take the data's lock and the
 * instance never comes back). Written when the process is spawned, so its mtime is the container's
 * start (bench/cold-start.ts reads it).
 */
export const ENGINE_PID_FILE = '.settee-engine.pid';

/** `<pid> <start time in clock ticks since boot>`: a pid reused by another process does not match. */
export async function recordEnginePid(folder: string, pid: number): Promise<void> {
  const started = await startTimeOf(pid);
  if (started === undefined) return;
  await fs.writeFile(path.join(folder, ENGINE_PID_FILE), `${pid} ${started}\n`);
}

/** Kills (SIGKILL) the engine recorded in `folder` if that very process still runs; true if it did. */
export async function killLeftoverEngine(folder: string): Promise<boolean> {
  const file = path.join(folder, ENGINE_PID_FILE);
  const recorded = await fs.readFile(file, 'utf8').catch(() => '');
  const [pid, started] = recorded.trim().split(' ').map(Number);
  await fs.rm(file, { force: true });
  if (!pid || started === undefined || (await startTimeOf(pid)) !== started) return false;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return false;
  }
  // Gone once /proc no longer lists it (or lists a zombie its new parent has not reaped yet).
  for (let i = 0; i < 100 && (await startTimeOf(pid)) === started && !(await isZombie(pid)); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return true;
}

async function startTimeOf(pid: number): Promise<number | undefined> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  // Fields after the command name (in parentheses, which may hold spaces); starttime is field 22.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

async function isZombie(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return !stat || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}
