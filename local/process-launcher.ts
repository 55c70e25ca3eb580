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
 * only, and evaluates it: `exec env -i ... <command>` replaces it, keeping its pid, its output pipes
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
  /**
   * The shell forked ahead (default /bin/sh). Only the launcher's test sets it (a path that does
   * not exist): a fork that fails must leave starts to a plain spawn, and no other way makes it fail.
   */
  shell?: string;
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
  private ready: ChildProcess | undefined;
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
    this.scheduleRefill();
    if (!ready) return startProcess({ ...options, ownProcessGroup: this.group });
    ready.stdin?.end(buildExecScript(options));
    return manageChild(ready, options);
  }

  /** Ends the ready process (it exits on EOF) and makes no other. */
  close(): void {
    this.closed = true;
    clearTimeout(this.refill);
    this.ready?.stdin?.end();
    this.ready = undefined;
  }

  /**
   * The next ready process, after the refill delay: on a miss too, so a missed start costs its one
   * fork as before, not a second fork of the stand-in on its path.
   */
  private scheduleRefill(): void {
    this.refill ??= setTimeout(() => {
      this.refill = undefined;
      this.makeReady();
    }, this.options.refillAfterMs ?? REFILL_AFTER_MS);
    this.refill.unref();
  }

  private takeReady(options: StartProcessOptions): ChildProcess | undefined {
    const ready = this.ready;
    this.ready = undefined;
    // Spawned (a pid), alive (its exit not yet seen, so manageChild will see it) and in the group
    // the start asks for.
    const usable =
      ready &&
      ready.pid !== undefined &&
      ready.exitCode === null &&
      ready.signalCode === null &&
      (options.ownProcessGroup ?? this.group) === this.group;
    if (usable) return ready;
    ready?.stdin?.end();
    return undefined;
  }

  private makeReady(): void {
    if (this.closed || this.ready) return;
    let child: ChildProcess;
    try {
      child = spawnTracked({
        command: this.options.shell ?? '/bin/sh',
        args: ['-c', READY_SCRIPT],
        env: process.env,
        group: this.group,
        stdin: 'pipe',
      });
    } catch {
      return; // A fork that fails (EMFILE, EAGAIN): starts spawn as before until the next refill.
    }
    // A write to a process that died meanwhile fails; its exit says so to whoever manages it.
    child.stdin?.on('error', () => undefined);
    // A fork that fails after the call (ENOENT, EAGAIN) is reported here, not thrown: not ready.
    child.once('error', () => {
      if (this.ready === child) this.ready = undefined;
    });
    child.once('exit', () => {
      if (this.ready === child) this.ready = undefined;
    });
    this.ready = child;
  }
}

/**
 * What the ready process evaluates: change to the folder, then exec the command through `env -i`
 * with the whole environment asked for, its stdin /dev/null as startProcess gives it. Nothing of the
 * shell's own environment reaches the program: not the names it drops (`A.B`, `FOO-BAR`, which are
 * no shell identifiers), not the PWD and OLDPWD its `cd` rewrites, not its script's variables.
 * Every word single-quoted, so no value is expanded; `--` so a name starting with `-` is no option.
 */
export function buildExecScript(options: StartProcessOptions): string {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
  const set = Object.entries(options.env ?? process.env).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  const words = [
    'env',
    '-i',
    '--',
    ...set.map(([name, value]) => `${name}=${value}`),
    options.command,
    ...options.args,
  ];
  const cd = options.cwd === undefined ? '' : `cd ${quote(options.cwd)} || exit 127\n`;
  return `${cd}exec ${words.map(quote).join(' ')} </dev/null\n`;
}
