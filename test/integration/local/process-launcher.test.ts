import fs from 'node:fs';
import os from 'node:os';
import { ProcessLauncher } from '../../../local/process-launcher.js';
import { isProcessAlive, processesWithEnv, type ManagedProcess } from '../../../local/process.js';
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

interface Report {
  pid: number;
  cwd: string;
  argv: string[];
  env: object;
}

/** What REPORT printed: its exit can be seen before the last chunk of its output, so waited for. */
const reportOf = (started: ManagedProcess): Promise<Report> =>
  waitFor(
    `${started.name}'s report`,
    async () => {
      try {
        return JSON.parse(started.output()) as Report;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );

describe('the process launcher (a container process created ahead of its start)', () => {
  let launcher: ProcessLauncher;
  afterEach(async () => {
    launcher.close();
    // Its waiting shell gone before the next test looks for the next one.
    await waitFor(
      'the waiting process to end',
      async () => (processesWithEnv(MARK).length ? undefined : true),
      {
        timeoutMs: 30_000,
        intervalMs: 20,
      },
    );
  });

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
    const seen = await reportOf(started);
    expect(seen.pid).toBe(forkedBefore);
    expect(seen.cwd).toBe(fs.realpathSync(os.tmpdir()));
    expect(seen.argv).toEqual(['one arg', "it's"]);
    const { HOME: _unset, ...expected } = env;
    expect(seen.env).toEqual(expected);
  });

  it('when the environment has names the shell drops or uses itself, then the program still gets exactly the environment asked for', async () => {
    // Inherited by the waiting shell: dash drops `A.B` and `FOO-BAR` (no shell identifiers, which
    // Kubernetes allows) and its script assigns `s` and `l`, so passing only what differs from the
    // shell's environment loses or changes them.
    const own = { 'A.B': 'dotted', 'FOO-BAR': 'dashed', s: 'not the script', l: 'nor its line' };
    Object.assign(process.env, own);
    try {
      launcher = new ProcessLauncher({ refillAfterMs: 60_000 });
      const forkedBefore = await waitForShell();
      const env = { ...process.env };
      const started = launcher.start({
        name: 'report',
        command: process.execPath,
        args: ['-e', REPORT],
        env,
      });

      expect(started.pid).toBe(forkedBefore);
      await expect(started.exited).resolves.toBe(3);
      expect((await reportOf(started)).env).toEqual(env);
    } finally {
      for (const name of Object.keys(own)) delete process.env[name];
    }
  });

  it('when the waiting shell cannot be forked, then programs are started by a plain spawn and nothing throws', async () => {
    // The refill runs soon after each start, so its failing fork is seen too.
    launcher = new ProcessLauncher({ shell: '/nowhere/sh', refillAfterMs: 1 });
    for (const name of ['first', 'second']) {
      const started = launcher.start({ name, command: process.execPath, args: ['-e', REPORT] });
      expect(started.pid).toBeGreaterThan(0);
      await expect(started.exited).resolves.toBe(3);
      expect(await reportOf(started)).toMatchObject({ pid: started.pid });
    }
  });

  it('when a second start comes before another process is ready, then it is spawned as startProcess would, and close ends the waiting one', async () => {
    // A refill after a start, not on its path: one comes within a second, none before the second start.
    launcher = new ProcessLauncher({ refillAfterMs: 1_000 });
    const forkedBefore = await waitForShell();
    const first = launcher.start({ name: 'first', command: process.execPath, args: ['-e', REPORT] });
    const second = launcher.start({ name: 'second', command: process.execPath, args: ['-e', REPORT] });

    expect(first.pid).toBe(forkedBefore);
    expect(second.pid).not.toBe(forkedBefore);
    await expect(Promise.all([first.exited, second.exited])).resolves.toEqual([3, 3]);
    expect(await reportOf(second)).toMatchObject({ pid: second.pid });
    // The refill after the starts made one for the next.
    const next = await waitForShell();
    launcher.close();
    await waitFor('the waiting process to end', async () => (isProcessAlive(next) ? undefined : true), {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
  });
});
