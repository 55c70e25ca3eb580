/**
 * LOCAL PLATFORM ONLY: the watchdog parent-watchdog.ts starts. Reads `+<target>` / `-<target>`
 * lines on stdin (a target is a pid, or a negative pid for a whole process group) and `bye` when
 * the parent stops in order. When stdin ends without `bye`, the parent is gone: every target still
 * listed gets SIGTERM, and SIGKILL after SETTEE_WATCHDOG_GRACE_MS if it still runs.
 */
import readline from 'node:readline';

const graceMs = Number(process.env.SETTEE_WATCHDOG_GRACE_MS ?? '10000');
const targets = new Set<number>();
let farewell = false;

// A Ctrl-C or hang-up meant for the parent's terminal must not end the watchdog first.
for (const signal of ['SIGINT', 'SIGHUP'] as const) process.on(signal, () => undefined);

function signal(target: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(target, name);
    return true;
  } catch {
    return false;
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'bye') farewell = true;
  const target = Number(line.slice(1));
  if (!Number.isInteger(target) || target === 0) return;
  if (line.startsWith('+')) targets.add(target);
  else if (line.startsWith('-')) targets.delete(target);
});
lines.on('close', () => {
  if (farewell || targets.size === 0) process.exit(0);
  console.error(`settee: the parent process is gone; stopping its ${targets.size} children`);
  for (const target of targets) signal(target, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  const timer = setInterval(() => {
    const alive = [...targets].filter((target) => signal(target, 0));
    if (alive.length === 0) process.exit(0);
    if (Date.now() < deadline) return;
    for (const target of alive) signal(target, 'SIGKILL');
    clearInterval(timer);
    process.exit(0);
  }, 100);
});
