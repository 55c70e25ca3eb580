/** Recent boots kept per instance: the earliest of them says when the next one may end. */
const BOOTS_KEPT = 5;
/**
 * The dense probing starts at this share of the instance's earliest recent boot: a boot would have
 * to be a quarter faster than the fastest of the last five for the sparse probes to delay its
 * release (then by at most one sparse interval).
 */
const DENSE_FROM_SHARE = 0.75;
/** Instances remembered at most; the least recently booted is forgotten first. */
const INSTANCES_KEPT = 10_000;

export interface ProbeScheduleOptions {
  /** The pause between two probes once the boot may end any moment (the gateway's probe interval). */
  intervalMs: number;
  /** The pause between two probes while the instance's recent boots say it cannot be up yet. */
  sparseIntervalMs: number;
}

/**
 * When to probe a booting instance next. Every probe of an engine that does not listen yet is a
 * refused connect paid on the cores the engine boots on (docs/cold-start.md), and most of a wake's
 * probes come in the first three quarters of the boot, when it cannot answer. So the schedule learns
 * each instance's boot (first probe to the first answer) and probes sparsely until three quarters of
 * its earliest recent boot have passed, then every interval. An instance it has not seen boot is
 * probed every interval throughout.
 */
export class ProbeSchedule {
  private readonly boots = new Map<string, number[]>();

  constructor(private readonly options: ProbeScheduleOptions) {}

  /** The pause before the next probe of `key`, whose first probe of this boot went out `elapsedMs` ago. */
  delayMs(key: string, elapsedMs: number): number {
    const recent = this.boots.get(key);
    if (recent === undefined) return this.options.intervalMs;
    const untilDense = Math.min(...recent) * DENSE_FROM_SHARE - elapsedMs;
    // The last sparse pause ends where the dense probing begins, not up to a sparse interval after it.
    return untilDense <= this.options.intervalMs
      ? this.options.intervalMs
      : Math.min(this.options.sparseIntervalMs, untilDense);
  }

  /** `key` answered `bootMs` after its first probe of this boot. */
  booted(key: string, bootMs: number): void {
    const recent = this.boots.get(key) ?? [];
    // Re-inserted, so the map's order is the order of the latest boots and its first key the stalest.
    this.boots.delete(key);
    this.boots.set(key, [...recent.slice(-(BOOTS_KEPT - 1)), bootMs]);
    if (this.boots.size > INSTANCES_KEPT) this.boots.delete(this.boots.keys().next().value as string);
  }

  /** The instance is gone: its boots say nothing about a new one of the same name. */
  forget(key: string): void {
    this.boots.delete(key);
  }
}
