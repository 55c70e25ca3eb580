/** The kubelet's restart delays after a container ends: 10 s doubling to 5 min. */
export const KUBELET_RESTART_BACKOFF = { baseMs: 10_000, maxMs: 300_000 };
/**
 * An exit this long after the container's last restart forgets its back-off: the kubelet's
 * crashLoopBackOff.HasExpiredFunc (600 s, whatever the maximum), its "10 minutes of running".
 */
export const BACKOFF_FORGOTTEN_AFTER_MS = 10 * 60_000;

/**
 * The kubelet's CrashLoopBackOff for one container, as its doBackOff keeps it
 * (pkg/kubelet/kuberuntime/kuberuntime_manager.go over client-go's flowcontrol.Backoff): there is
 * no entry before the first restart, so a container's first exit is restarted at once; each
 * restart moves the entry on (the base, then doubling up to the max); a later exit waits out the
 * entry's delay counted from the container's finish, not from when the exit was handled (a
 * status report that took seconds on a loaded API server is part of the wait, not added to it);
 * an exit more than BACKOFF_FORGOTTEN_AFTER_MS after the last restart starts over.
 * Times are epoch ms, passed in, so the decision is pure.
 */
export class CrashLoopBackOff {
  private entry: { delayMs: number; lastRestartAt: number } | undefined;

  constructor(private readonly policy: { baseMs: number; maxMs: number } = KUBELET_RESTART_BACKOFF) {}

  /** What a container that finished at `finishedAt` must still wait at `now`; 0: restart it now. */
  remainingMs(finishedAt: number, now: number): number {
    const entry = this.liveEntry(finishedAt);
    return entry ? Math.max(0, entry.delayMs - (now - finishedAt)) : 0;
  }

  /** The whole delay in force, as the kubelet's waiting message gives it ("back-off 20s ..."). */
  delayMs(finishedAt: number): number {
    return this.liveEntry(finishedAt)?.delayMs ?? 0;
  }

  /** Records a restart at `now` of the container that finished at `finishedAt` (the kubelet's Next). */
  restarted(finishedAt: number, now: number): void {
    const entry = this.liveEntry(finishedAt);
    const delayMs = entry ? Math.min(this.policy.maxMs, entry.delayMs * 2) : this.policy.baseMs;
    this.entry = { delayMs, lastRestartAt: now };
  }

  private liveEntry(finishedAt: number): { delayMs: number } | undefined {
    const entry = this.entry;
    return entry && finishedAt - entry.lastRestartAt <= BACKOFF_FORGOTTEN_AFTER_MS ? entry : undefined;
  }
}
