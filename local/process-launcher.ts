import type { ChildProcess } from 'node:child_process';
import {
  manageChild,
  ownProcessGroupByDefault,
  spawnTracked,
  startProcess,
  type ManagedProcess,
  type StartProcessOptions,
} from './process.js';

/**
 * The ready process reads its whole stdin (the script the start sends, then EOF) with builtins
 * only, and evaluates it: `exec env ... <command>` replaces it, keeping its pid, its output pipes
 * and its exit status for the parent. Told nothing (its parent gone or closing it), it ends.
 */
const READY_SCRIPT = 's=; while IFS= read -r l; do s="$s$l\n"; done; [ -n "$s" ] || exit 0; eval "$s"';

/** After a start, how long until the next process is made ready: off the started program's own start. */
const REFILL_AFTER_MS = 2_000;

export interface ProcessLauncherOptions {
  /** Start processes in a process group of their own (see StartProcessOptions.ownProcessGroup). */
  ownProcessGroup?: boolean;
  /** After a start, when to make the next process ready (default 2 s). */
  refillAfterMs?: number;
}

/**
 * LOCAL PLATFORM ONLY: starts processes as runc splits a container's `create` from its `start`.
 * A fork from Node copies the page tables of the whole parent and waits for the child's exec:
 * 2-3 ms from a 47 MB process, 7-15 ms at the median and tens of ms at p90 from the kubelet
 * stand-in's ~180 MB on a loaded machine (docs/cold-start.md). So one small shell is forked ahead,
 * waiting on its stdin; a start sends it the program, its arguments, folder and environment, and it
 * execs them: a pipe write on the start's path instead of a fork. Everything after is the same as
 * {@link startProcess}: the pid, the output, the exit status and the signals are the started
 * program's. With no ready process (two starts within the refill delay) a start spawns as before.
 */
export class ProcessLauncher {
  private ready: { child: ChildProcess; env: NodeJS.ProcessEnv } | undefined;
  private refill: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly group: boolean;

  constructor(private readonly options: ProcessLauncherOptions = {}) {
    this.group = options.ownProcessGroup ?? ownProcessGroupByDefault();
    this.makeReady();
  }

  /** Starts `options` as {@link startProcess} would, through the ready process when there is one. */
  start(options: StartProcessOptions): ManagedProcess {
    const ready = this.takeReady(options);
    if (!ready) return startProcess({ ...options, ownProcessGroup: this.group });
    const { child, env } = ready;
    child.stdin?.end(buildExecScript(options, env));
    this.refill ??= setTimeout(() => {
      this.refill = undefined;
      this.makeReady();
    }, this.options.refillAfterMs ?? REFILL_AFTER_MS);
    this.refill.unref();
    return manageChild(child, options);
  }

  /** Ends the ready process (it exits on EOF) and makes no other. */
  close(): void {
    this.closed = true;
    clearTimeout(this.refill);
    this.ready?.child.stdin?.end();
    this.ready = undefined;
  }

  private takeReady(
    options: StartProcessOptions,
  ): { child: ChildProcess; env: NodeJS.ProcessEnv } | undefined {
    const ready = this.ready;
    this.ready = undefined;
    // Alive (its exit not yet seen, so manageChild will see it) and in the group the start asks for.
    const usable =
      ready &&
      ready.child.exitCode === null &&
      ready.child.signalCode === null &&
      (options.ownProcessGroup ?? this.group) === this.group;
    if (usable) return ready;
    ready?.child.stdin?.end();
    this.makeReady();
    return undefined;
  }

  private makeReady(): void {
    if (this.closed || this.ready) return;
    const env = { ...process.env };
    const child = spawnTracked({
      command: '/bin/sh',
      args: ['-c', READY_SCRIPT],
      env,
      group: this.group,
      stdin: 'pipe',
    });
    // A write to a process that died meanwhile fails; its exit says so to whoever manages it.
    child.stdin?.on('error', () => undefined);
    child.once('exit', () => {
      if (this.ready?.child === child) this.ready = undefined;
    });
    this.ready = { child, env };
  }
}

/**
 * What the ready process evaluates: change to the folder, then exec the command through `env`
 * with exactly the environment asked for (`env -u` for what the ready process has but the start
 * does not want, `NAME=value` for what differs), its stdin /dev/null as startProcess gives it.
 * Every word single-quoted, so no value is expanded.
 */
export function buildExecScript(options: StartProcessOptions, readyEnv: NodeJS.ProcessEnv): string {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
  const wanted = options.env ?? readyEnv;
  // The shell's `cd` rewrites PWD and sets OLDPWD in what it passes on: those two always go as asked.
  const shellSets = new Set(['PWD', 'OLDPWD']);
  const unset = [...new Set([...Object.keys(readyEnv), ...shellSets])].filter(
    (name) => wanted[name] === undefined,
  );
  const set = Object.entries(wanted).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && (shellSets.has(entry[0]) || readyEnv[entry[0]] !== entry[1]),
  );
  const words = [
    'env',
    ...unset.flatMap((name) => ['-u', name]),
    ...set.map(([name, value]) => `${name}=${value}`),
    options.command,
    ...options.args,
  ];
  const cd = options.cwd === undefined ? '' : `cd ${quote(options.cwd)} || exit 127\n`;
  return `${cd}exec ${words.map(quote).join(' ')} </dev/null\n`;
}
