import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from './process.js';

/** A process of the control plane an outage can stop and start again (an unsupervised one). */
export interface OutageTarget {
  current: () => Pick<ManagedProcess, 'pid' | 'stop'>;
  again?: () => ManagedProcess;
  replace?: (next: ManagedProcess) => void;
}

export class ControlPlaneOutageError extends Error {
  readonly code = 'CONTROL_PLANE_OUTAGE';
  constructor(
    readonly processName: string,
    reason: string,
  ) {
    super(`no outage of ${processName}: ${reason}`);
    this.name = 'ControlPlaneOutageError';
  }
}

/**
 * Runs a control plane's outages, and ends one still in its sleep when the plane stops: started
 * again after stop() it would run on a removed data folder and hold its port, an orphan.
 */
export class Outages {
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  run(name: string, target: OutageTarget | undefined, downMs: number): Promise<void> {
    const running = this.outage(name, target, downMs);
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return running;
  }

  /** Ends every outage's sleep (none starts its process again) and waits for them to settle. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.inFlight);
  }

  private async outage(name: string, target: OutageTarget | undefined, downMs: number): Promise<void> {
    if (this.stopping.signal.aborted) throw new ControlPlaneOutageError(name, 'the control plane is stopped');
    if (!target?.again || !target.replace)
      throw new ControlPlaneOutageError(name, 'it is not running, or is supervised (restartOnExit)');
    await target.current().stop(0);
    // The outage's length is what is asked for: a sleep, not a wait on some condition.
    await sleep(downMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    if (this.stopping.signal.aborted)
      throw new ControlPlaneOutageError(name, 'the control plane was stopped during it; not started again');
    target.replace(target.again());
  }
}
