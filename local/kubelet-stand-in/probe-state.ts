import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { probeTiming, runProbe } from './prober.js';

/** One probe's schedule and its run of successes or failures. */
export class ProbeState {
  nextAt: number;
  lastMessage = '';
  private successes = 0;
  private failures = 0;
  private readonly timing;

  constructor(
    private readonly spec: V1Probe,
    startedAt: Date,
  ) {
    this.timing = probeTiming(spec);
    this.nextAt = startedAt.getTime() + this.timing.initialDelayMs;
  }

  skipTicksBefore(time: number): number {
    const { periodMs } = this.timing;
    const skipped = this.nextAt < time ? Math.ceil((time - this.nextAt) / periodMs) : 0;
    this.nextAt += skipped * periodMs;
    return skipped;
  }

  /** Counts the ticks before `time` as failures: the container was not listening yet. */
  missTicksBefore(time: number): 'failed' | 'pending' {
    const missed = this.skipTicksBefore(time);
    if (missed === 0) return 'pending';
    this.lastMessage = `${missed} probe(s) found nothing listening while the container was starting`;
    this.successes = 0;
    this.failures += missed;
    return this.failures >= this.timing.failureThreshold ? 'failed' : 'pending';
  }

  /** Makes the next tick now (a probe gated by the startup probe runs as soon as that passes). */
  dueNow(): void {
    this.nextAt = Math.min(this.nextAt, Date.now());
  }

  /** Runs it; 'passed' / 'failed' once a threshold is reached, else 'pending'. */
  async probe(container: V1Container, podIP: string): Promise<'passed' | 'failed' | 'pending'> {
    const result = await runProbe(this.spec, container, podIP);
    // Ticks stay on the period's grid from the container's start.
    const { periodMs } = this.timing;
    this.nextAt += Math.max(1, Math.ceil((Date.now() - this.nextAt) / periodMs)) * periodMs;
    if (result.ok) {
      this.failures = 0;
      this.successes += 1;
      return this.successes >= this.timing.successThreshold ? 'passed' : 'pending';
    }
    this.lastMessage = result.message;
    this.successes = 0;
    this.failures += 1;
    return this.failures >= this.timing.failureThreshold ? 'failed' : 'pending';
  }
}
