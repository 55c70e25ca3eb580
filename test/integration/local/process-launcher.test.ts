import fs from 'node:fs';
import os from 'node:os';
import { ProcessLauncher } from '../../../local/process-launcher.js';
import { isProcessAlive, processesWithEnv } from '../../../local/process.js';
import { waitFor } from '../../../local/wait.js';

// Marks the waiting processes forked from now on (they inherit this environment), to find them.
const MARK = `SETTEE_LAUNCHER_TEST=${process.pid}`;
process.env.SETTEE_LAUNCHER_TEST = String(process.pid);

const waitForShell = (): Promise<number> =>
  waitFor('the launcher to fork its waiting process', async () => processesWithEnv(MARK)[0], {
    timeoutMs: 30_000,
    intervalMs: 20,
  });

/** A program that prints what it was started with, then exits 3. */
const REPORT = `process.stdout.write(JSON.stringify({ pid: process.pid, cwd: process.cwd(), argv: process.argv.slice(1), env: process.env })); process.exit(3)`;

describe('the process launcher (a container process created ahead of its start)', () => {
  let launcher: ProcessLauncher;
  afterEach(() => launcher.close());

  it('when a program is started through it, then it runs in the process forked before the start, with its arguments, folder and exactly the environment asked for, and its output and exit status are seen', async () => {
    launcher = new ProcessLauncher({ refillAfterMs: 60_000 });
    const forkedBefore = await waitForShell();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      QUOTED: `it's "$HOME" and\na second line`,
      HOME: undefined,
      PATH: `${process.env.PATH ?? ''}:/nowhere`,
    };
    const started = launcher.start({
      name: 'report',
      command: process.execPath,
      args: ['-e', REPORT, '--', 'one arg', "it's"],
      cwd: os.tmpdir(),
      env,
    });

    expect(started.pid).toBe(forkedBefore);
    await expect(started.exited).resolves.toBe(3);
    const seen = JSON.parse(started.output()) as { pid: number; cwd: string; argv: string[]; env: object };
    expect(seen.pid).toBe(forkedBefore);
    expect(seen.cwd).toBe(fs.realpathSync(os.tmpdir()));
    expect(seen.argv).toEqual(['one arg', "it's"]);
    const { HOME: _unset, ...expected } = env;
    expect(seen.env).toEqual(expected);
  });

  it('when a second start comes before another process is ready, then it is spawned as startProcess would, and close ends the waiting one', async () => {
    launcher = new ProcessLauncher({ refillAfterMs: 60_000 });
    const forkedBefore = await waitForShell();
    const first = launcher.start({ name: 'first', command: process.execPath, args: ['-e', REPORT] });
    const second = launcher.start({ name: 'second', command: process.execPath, args: ['-e', REPORT] });

    expect(first.pid).toBe(forkedBefore);
    expect(second.pid).not.toBe(forkedBefore);
    await expect(Promise.all([first.exited, second.exited])).resolves.toEqual([3, 3]);
    expect(JSON.parse(second.output())).toMatchObject({ pid: second.pid });
    // The second start found none ready and made one for the next.
    const next = await waitForShell();
    launcher.close();
    await waitFor('the waiting process to end', async () => (isProcessAlive(next) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
  });
});
