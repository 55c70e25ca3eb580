import { exponentialBackoffMs, type BackoffPolicy } from '../kube/controller-runtime/backoff.js';
import type { ManagedProcess } from './process.js';

export interface SuperviseOptions {
  name: string;
  /** Starts one run of the process; called again for each restart. */
  start: () => ManagedProcess;
  /** A first run already started (and seen ready) by the caller; default: `start()` now. */
  first?: ManagedProcess;
  /**
   * Wait before a repeated restart, doubling while runs stay short: kubelet's CrashLoopBackOff,
   * shortened. A first exit (the first, or the first after a run of stableAfterMs) restarts at once.
   */
  restartBackoff?: BackoffPolicy;
  /** A run that lasted this long is healthy: its exit is a first one again, restarted at once. */
  stableAfterMs?: number;
  /** Where restarts are told (make run prints them). */
  log?: (message: string) => void;
}

export interface SupervisedProcess {
  readonly name: string;
  /** The run in progress (or the last one, while a restart waits). */
  current(): ManagedProcess;
  /** Restarts so far. */
  readonly restarts: number;
  /** Stops restarting, then stops the process as ManagedProcess.stop does. */
  stop(graceMs?: number): Promise<void>;
}

export const DEFAULT_RESTART_BACKOFF: BackoffPolicy = Object.freeze({ baseMs: 1_000, maxMs: 30_000 });
const DEFAULT_STABLE_AFTER_MS = 60_000;

/**
 * Keeps one of the local platform's own processes running, as its Deployment's restart policy
 * does in a cluster: whenever it exits without being stopped (the operator exits by design when it
 * loses its Lease), it is started again, at once the first time, as the kubelet restarts a crashed
 * container, and after a backoff doubling from the base while it keeps exiting soon after its start.
 */
export function supervise(options: SuperviseOptions): SupervisedProcess {
  const backoff = options.restartBackoff ?? DEFAULT_RESTART_BACKOFF;
  const stableAfterMs = options.stableAfterMs ?? DEFAULT_STABLE_AFTER_MS;
  let running = options.first ?? options.start();
  let restarts = 0;
  let shortRuns = 0;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;

  const restartWhenExited = (run: ManagedProcess): void => {
    const startedAt = Date.now();
    void run.exited.then((exit) => {
      if (stopping) return;
      shortRuns = Date.now() - startedAt >= stableAfterMs ? 1 : shortRuns + 1;
      // The first exit waits nothing (failures 0); each repeated one the base, doubling.
      const delayMs = exponentialBackoffMs(backoff, shortRuns - 1);
      options.log?.(
        `${options.name} exited (${exit}); starting it again ${delayMs > 0 ? `in ${delayMs} ms` : 'at once'}`,
      );
      restartTimer = setTimeout(() => {
        if (stopping) return;
        running = options.start();
        restarts += 1;
        restartWhenExited(running);
      }, delayMs);
    });
  };
  restartWhenExited(running);

  return {
    name: options.name,
    current: () => running,
    get restarts() {
      return restarts;
    },
    async stop(graceMs) {
      stopping = true;
      clearTimeout(restartTimer);
      await running.stop(graceMs);
    },
  };
}
