import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import { runAhead } from '../../../../bench/tenant-isolation/window-monitor.js';

const SCHED_RR = 2;
const isRoot = process.getuid?.() === 0;

/** Each thread of `pid`: its id, real-time priority and scheduling policy (/proc/.../stat's 40th, 41st fields). */
function threads(pid: number): Array<{ tid: number; priority: number; policy: number }> {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis start at the 3rd.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(tid), priority: Number(fields[40 - 3]), policy: Number(fields[41 - 3]) };
  });
}

describe("tenant-isolation: B's probe ahead of ordinary processes", () => {
  // The bench runs as root here; elsewhere it prints that the probe stays an ordinary process.
  (isRoot ? it : it.skip)(
    'when a process is put ahead, then every one of its threads is real-time round-robin, its main thread one priority above the others',
    async () => {
      // A node process: its main thread beside V8's and libuv's threads.
      const child = spawn(
        process.execPath,
        ['-e', 'process.stdout.write("up"); setTimeout(() => undefined, 30_000)'],
        { stdio: ['ignore', 'pipe', 'ignore'] },
      );
      try {
        await once(child.stdout!, 'data');
        expect(threads(child.pid!).length).toBeGreaterThan(1);
        expect(await runAhead(child.pid!)).toBe(true);
        for (const thread of threads(child.pid!))
          expect(thread).toEqual({
            tid: thread.tid,
            policy: SCHED_RR,
            priority: thread.tid === child.pid ? 2 : 1,
          });
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
