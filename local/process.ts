import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { openLogFile } from './log-file.js';

/** A child process of the local platform or of a test run, with its output kept for diagnosis. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves with the exit code (or signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Last lines of combined stdout/stderr, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Also append output to this file (rotated past LOG_FILE_MAX_BYTES: log-file.ts). */
  logFile?: string;
  /** Echo each output line, prefixed with the name (the local platform does this for its children). */
  echo?: boolean;
  /** Called with each output line as it arrives (a benchmark timestamps an engine's boot steps). */
  onLine?: (line: string) => void;
  /**
   * Run in a process group of its own, so a Ctrl-C at the terminal reaches only the parent, which
   * then stops its children in order (the local platform), instead of every process at once.
   * Default: on once {@link trackChildProcesses} was called, off otherwise.
   */
  ownProcessGroup?: boolean;
}

const OUTPUT_LINES_KEPT = 200;
const running = new Set<ChildProcess>();

/** Told of every child as it starts and ends (parent-watchdog.ts); `group` = its own process group. */
export interface ChildProcessTracker {
  started(pid: number, group: boolean): void;
  exited(pid: number, group: boolean): void;
}
let tracker: ChildProcessTracker | undefined;

/**
 * Reports every child started from now on to `next` (make run's parent watchdog), and starts each
 * in a process group of its own unless told otherwise. With the watchdog there to end them should
 * the parent die, a Ctrl-C at the terminal need not reach them: the parent stops them in order.
 * Otherwise Redis, etcd and the API server would end at once while the gateway and the operator,
 * stopped first, still used them.
 */
export function trackChildProcesses(next: ChildProcessTracker): void {
  tracker = next;
}

/** Whether a child starts in a process group of its own unless told (StartProcessOptions.ownProcessGroup). */
export function ownProcessGroupByDefault(): boolean {
  return tracker !== undefined;
}

/** Thrown when a process ends before it became ready; carries its last output. */
export class ProcessExitedError extends Error {
  constructor(
    readonly processName: string,
    readonly exit: number | string,
    readonly output: string,
  ) {
    super(`${processName} exited (${exit}) before it was ready:\n${output}`);
    this.name = 'ProcessExitedError';
  }
}

export function startProcess(options: StartProcessOptions): ManagedProcess {
  const group = options.ownProcessGroup ?? ownProcessGroupByDefault();
  const child = spawnTracked({
    command: options.command,
    args: options.args,
    env: options.env ?? process.env,
    cwd: options.cwd,
    group,
    stdin: 'ignore',
  });
  return manageChild(child, options);
}

/**
 * Spawns a child that the reaper ends with this process and the tracker hears of (its start now,
 * its exit whenever it comes), whether or not it is ever handed to {@link manageChild}.
 */
export function spawnTracked(options: {
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string | undefined;
  group: boolean;
  stdin: 'ignore' | 'pipe';
}): ChildProcess {
  installReaper();
  const { group } = options;
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.stdin, 'pipe', 'pipe'],
    detached: group,
  });
  // No pid: the spawn failed (its 'error' follows), so there is nothing to reap or track.
  if (child.pid !== undefined) {
    running.add(child);
    tracker?.started(child.pid, group);
  }
  child.once('exit', () => {
    running.delete(child);
    if (child.pid !== undefined) tracker?.exited(child.pid, group);
  });
  return child;
}

/**
 * The {@link ManagedProcess} of a child from {@link spawnTracked} that has not exited yet (its
 * exit event not yet emitted): its output kept, its exit awaited, its stop.
 */
export function manageChild(
  child: ChildProcess,
  options: Pick<StartProcessOptions, 'name' | 'command' | 'logFile' | 'echo' | 'onLine'>,
): ManagedProcess {
  const lines: string[] = [];
  const log = options.logFile ? openLogFile(options.logFile) : undefined;
  // Each stream's unfinished line apart: a stderr chunk must not land inside a long stdout line.
  const partials = { stdout: '', stderr: '' };
  const onData = (stream: keyof typeof partials) => (chunk: Buffer) => {
    log?.write(chunk);
    const parts = (partials[stream] + chunk.toString('utf8')).split('\n');
    partials[stream] = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      options.onLine?.(line);
      if (options.echo) process.stdout.write(`[${options.name}] ${line}\n`);
    }
    if (lines.length > OUTPUT_LINES_KEPT) lines.splice(0, lines.length - OUTPUT_LINES_KEPT);
  };
  child.stdout?.on('data', onData('stdout'));
  child.stderr?.on('data', onData('stderr'));

  const exited = new Promise<number | string>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      log?.end();
      resolve(code ?? signal ?? 'unknown');
    };
    child.once('exit', done);
    child.once('error', (err) => {
      lines.push(`failed to start ${options.command}: ${err.message}`);
      running.delete(child);
      done(null, null);
    });
  });

  return {
    name: options.name,
    pid: child.pid ?? -1,
    exited,
    output: () => [...lines, partials.stdout, partials.stderr].join('\n').trim(),
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null || !running.has(child)) {
        await exited;
        return;
      }
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True when a process's output says its port was taken between our probe and its bind. */
export function isAddressInUse(output: string): boolean {
  return /address already in use|EADDRINUSE|bind: address/i.test(output);
}

let reaperInstalled = false;

/**
 * Kills every child still running when this process exits, however it exits, so an interrupted
 * or failed test run leaves no etcd, kube-apiserver, redis-server or engine behind.
 */
function installReaper(): void {
  if (reaperInstalled) return;
  reaperInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Whether a process with this pid exists (signal 0 checks without delivering anything). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The processes (but this one) whose environment holds `entry` ("NAME=value"), from /proc: the
 * children a run marked through its environment, found even after their parent let them go.
 */
export function processesWithEnv(entry: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid)
    .map(Number)
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`).includes(`${entry}\0`);
      } catch {
        return false;
      }
    });
}
