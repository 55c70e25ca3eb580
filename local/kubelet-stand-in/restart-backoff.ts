/** The kubelet's restart delays after a container ends: 10 s doubling to 5 min. */
export const KUBELET_RESTART_BACKOFF = { baseMs: 10_000, maxMs: 300_000 };
/** A run that lasted this long resets the restart backoff, as the kubelet's does. */
export const STABLE_RUN_MS = 10 * 60_000;

/** The kubelet's CrashLoopBackOff: the first restart at once, then base doubling up to max. */
export function restartDelayMs(shortRuns: number, backoff: { baseMs: number; maxMs: number }): number {
  if (shortRuns <= 1) return 0;
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** (shortRuns - 2));
}
