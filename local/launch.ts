import { getFreePort } from './ports.js';
import { isAddressInUse, ProcessExitedError, type ManagedProcess } from './process.js';
import { waitFor } from './wait.js';

export interface LaunchOptions {
  /** For messages, e.g. "etcd" or "pouchdb-server stand-in". */
  what: string;
  /** A fixed port: no retry on another one. Default: a free loopback port. */
  port?: number;
  /** Starts the server on `port`. */
  start(port: number): Promise<ManagedProcess> | ManagedProcess;
  /**
   * One readiness check: true when ready, undefined (or a throw) while not yet. Given the process,
   * a check can make sure that this process answers, not another one on the same port.
   */
  isReady(port: number, process: ManagedProcess): Promise<true | undefined>;
  readyTimeoutMs: number;
  intervalMs?: number;
}

export interface Launched {
  process: ManagedProcess;
  port: number;
}

/** A launched server, and how to start it again on the same port with the same settings. */
export interface Restartable extends Launched {
  restart(): ManagedProcess;
}

const START_ATTEMPTS = 3;

/**
 * Starts a server on a free port and resolves once `isReady` says so. Fails fast with a
 * ProcessExitedError (carrying the output) when the process ends first; a port taken between our
 * probe and the server's bind is retried on another free port, unless the port was fixed.
 */
export async function launchOnFreePort(options: LaunchOptions): Promise<Launched> {
  const attempts = options.port === undefined ? START_ATTEMPTS : 1;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = options.port ?? (await getFreePort());
    const proc = await options.start(port);
    try {
      await waitUntilReady(proc, port, options);
      return { process: proc, port };
    } catch (err) {
      await proc.stop();
      lastError = err;
      if (!(err instanceof ProcessExitedError && isAddressInUse(err.output))) throw err;
    }
  }
  throw lastError;
}

async function waitUntilReady(proc: ManagedProcess, port: number, options: LaunchOptions): Promise<void> {
  try {
    await waitFor(`${options.what} to be ready`, () => options.isReady(port, proc), {
      timeoutMs: options.readyTimeoutMs,
      intervalMs: options.intervalMs ?? 100,
      abort: proc.exited,
    });
  } catch (err) {
    const exit = await Promise.race([
      proc.exited,
      new Promise<undefined>((r) => setTimeout(r, 100, undefined)),
    ]);
    if (exit !== undefined) throw new ProcessExitedError(proc.name, exit, proc.output());
    throw new Error(`${(err as Error).message}\n--- ${proc.name} output ---\n${proc.output()}`, {
      cause: err,
    });
  }
}
