import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  ENGINE_PID_FILE,
  killLeftoverEngine,
  parseEnginePidRecord,
  recordEnginePid,
} from '../../../local/kubelet-stand-in/engine-pid-file.js';
import { isProcessAlive } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

/** A process that outlives whoever started it, as an engine outlives a SIGKILLed kubelet stand-in. */
function startOrphanLike(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child.pid ?? -1;
}

describe('the engine pid file of a kubelet stand-in volume', () => {
  let folder: string;
  const started: number[] = [];

  beforeEach(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-engine-pid-'));
  });
  afterEach(async () => {
    for (const pid of started.splice(0)) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    await fs.rm(folder, { recursive: true, force: true });
  });

  it('when the engine recorded in a volume still runs (its stand-in was killed), then the next stand-in kills it before starting another', async () => {
    const orphan = startOrphanLike();
    started.push(orphan);
    const spawnedAtMs = Date.now() + 0.25;
    recordEnginePid(folder, orphan, spawnedAtMs);
    // The container's start time, to the millisecond (bench/cold-start.ts times the wake by it).
    const record = parseEnginePidRecord(await fs.readFile(path.join(folder, ENGINE_PID_FILE), 'utf8'));
    expect(record).toMatchObject({ pid: orphan, spawnedAtMs });
    expect(await killLeftoverEngine(folder)).toBe(true);
    // Killed, it is a zombie until this process (its parent here) reaps it, which kill(pid, 0) still
    // finds: failed once in a fresh-clone CI run.
    await waitFor('the orphan to be reaped', async () => (isProcessAlive(orphan) ? undefined : true), {
      timeoutMs: 10_000,
    });
    expect(await fs.readdir(folder)).toEqual([]);
  });

  it('when the recorded pid now belongs to another process (reused), or to none, then nothing is killed', async () => {
    const other = startOrphanLike();
    started.push(other);
    // The right pid with another start time: what a reused pid looks like.
    await fs.writeFile(path.join(folder, ENGINE_PID_FILE), `${other} 1\n`);
    expect(await killLeftoverEngine(folder)).toBe(false);
    expect(isProcessAlive(other)).toBe(true);
    expect(await killLeftoverEngine(folder)).toBe(false);
  });
});
