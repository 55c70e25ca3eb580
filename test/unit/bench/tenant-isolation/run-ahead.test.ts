import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import { runAhead } from '../../../../bench/tenant-isolation/window-monitor.js';

const SCHED_RR = 2;
const isRoot = process.getuid?.() === 0;

/** The scheduling policy of every thread of `pid` (/proc/<pid>/task/<tid>/stat's 41st field). */
function threadPolicies(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis start at the 3rd.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
  });
}

describe("tenant-isolation: B's probe ahead of ordinary processes", () => {
  // The bench runs as root here; elsewhere it prints that the probe stays an ordinary process.
  (isRoot ? it : it.skip)(
    'when a process is put ahead, then every one of its threads is real-time round-robin, not its main thread alone',
    async () => {
      // A node process: its main thread beside V8's and libuv's threads.
      const child = spawn(
        process.execPath,
        ['-e', 'process.stdout.write("up"); setTimeout(() => undefined, 30_000)'],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      try {
        await once(child.stdout!, 'data');
        expect(threadPolicies(child.pid!).length).toBeGreaterThan(1);
        expect(await runAhead(child.pid!)).toBe(true);
        expect(new Set(threadPolicies(child.pid!))).toEqual(new Set([SCHED_RR]));
      } finally {
        child.kill();
        await once(child, 'exit');
      }
    },
  );

  it('when the process does not exist, then it says so instead of throwing', async () => {
    expect(await runAhead(2 ** 22 + 1)).toBe(false);
  });
});
