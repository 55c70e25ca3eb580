import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackChildProcesses } from './process.js';

const WATCHDOG_ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'parent-watchdog-main.ts');

/**
 * LOCAL PLATFORM ONLY. `make run`'s children run in process groups of their own (a Ctrl-C at the
 * terminal reaches only the parent, which stops them in order), so nothing ends them when the
 * parent itself is killed hard (SIGKILL, a closed terminal). This starts a small watchdog process
 * that holds the read end of a pipe from the parent and is told every child's pid as it starts and
 * ends: when the pipe closes without a goodbye (the kernel closes it as the parent dies, however it
 * dies), it stops every child still listed, SIGTERM first (so the stand-in stops its engines and
 * etcd syncs), SIGKILL after the grace period (parent-watchdog-main.ts).
 */
export function startParentWatchdog(options: { graceMs?: number } = {}): { release(): void } {
  const watchdog = spawn(process.execPath, ['--import', 'tsx', WATCHDOG_ENTRY], {
    // Its own process group, so a Ctrl-C at the terminal does not end it before the parent's
    // orderly stop is done.
    detached: true,
    stdio: ['pipe', 'ignore', 'inherit'],
    env: { ...process.env, SETTEE_WATCHDOG_GRACE_MS: String(options.graceMs ?? 10_000) },
  });
  watchdog.unref();
  const pipe = watchdog.stdin;
  // The pipe must not keep the parent alive, and a write after the watchdog died must not crash it.
  (pipe as unknown as { unref?: () => void }).unref?.();
  pipe.on('error', () => undefined);
  trackChildProcesses({
    started: (pid, group) => pipe.write(`+${group ? -pid : pid}\n`),
    exited: (pid, group) => pipe.write(`-${group ? -pid : pid}\n`),
  });
  return {
    // An orderly stop: the children are gone already; the watchdog exits on the goodbye.
    release() {
      pipe.end('bye\n');
    },
  };
}
