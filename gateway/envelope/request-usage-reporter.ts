import type { Logger } from 'winston';
import {
  endOfUtcDay,
  previousUtcDay,
  subtractRequestCounts,
  utcDay,
  ZERO_REQUEST_COUNTS,
  type RequestCounts,
} from '../../api/request-usage.js';
import { errorMessage } from '../../observability/logger.js';
import type { RequestMeter, InstanceCounts } from './request-meter.js';
import type { RequestUsageWriter } from './request-usage-lease.js';

export interface RequestUsageReporterOptions {
  meter: Pick<RequestMeter, 'entries'>;
  write: RequestUsageWriter;
  /** This process's writer id (api/request-usage.ts requestUsageWriterId). */
  writerId: string;
  /** SETTEE_GATEWAY_USAGE_INTERVAL: at most one write per instance per interval, when counts moved. */
  intervalMs: number;
  logger: Logger;
  onWritten?: (outcome: 'success' | 'error') => void;
  now?: () => number;
}

/** Where an instance's day starts in the meter's since-start counts, and what was last written. */
interface InstanceDays {
  day: string;
  /** The meter's counts when `day` began for this process (zero if it began before the first request). */
  dayStart: RequestCounts;
  /** The previous day's final counts, written until the day after it ends. */
  closed: { day: string; counts: RequestCounts } | undefined;
  lastWritten: string;
}

/** Midnight is written a moment after it passes, so the new day's counts start at zero. */
const MIDNIGHT_SLACK_MS = 10;

const snapshot = (c: InstanceCounts): RequestCounts => ({
  read: c.read,
  write: c.write,
  query: c.query,
  bytesIn: c.bytesIn,
  bytesOut: c.bytesOut,
});

const isZero = (c: RequestCounts): boolean =>
  c.read === 0 && c.write === 0 && c.query === 0 && c.bytesIn === 0 && c.bytesOut === 0;

/**
 * Keeps the meter's per-instance counts in the Kubernetes API, where they survive this process:
 * every interval (and at each UTC midnight, and on stop) each instance whose counts moved gets its
 * counts of the UTC day written to its activity Lease (request-usage-lease.ts). Counts are
 * cumulative over the day, so a write that is retried or repeated is harmless, and each process
 * writes under its own key, so the operator sums the keys without counting anything twice. What a
 * process counted after its last write is lost if it is killed without a stop (at most an interval).
 */
export class RequestUsageReporter {
  private readonly days = new Map<string, InstanceDays>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: RequestUsageReporterOptions) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.schedule();
  }

  /** Writes what moved since the last write; a write already running is awaited, not doubled. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Stops the timer and writes the last counts (graceful shutdown: nothing counted is lost). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.flushing;
    await this.flush();
  }

  private schedule(): void {
    if (this.stopped) return;
    const now = this.now();
    const untilMidnight = endOfUtcDay(utcDay(now)) + MIDNIGHT_SLACK_MS - now;
    this.timer = setTimeout(
      () => {
        void this.flush().finally(() => this.schedule());
      },
      Math.min(this.options.intervalMs, untilMidnight),
    );
    this.timer.unref();
  }

  private async writeAll(): Promise<void> {
    const now = this.now();
    const today = utcDay(now);
    const seen = new Set<string>();
    for (const [key, counts] of this.options.meter.entries()) {
      seen.add(key);
      await this.writeOne(key, counts, today);
    }
    // Instances the meter forgot (deleted): their Lease went with them.
    for (const key of this.days.keys()) if (!seen.has(key)) this.days.delete(key);
  }

  private async writeOne(key: string, counts: InstanceCounts, today: string): Promise<void> {
    const current = snapshot(counts);
    let state = this.days.get(key);
    if (state === undefined) {
      state = { day: today, dayStart: { ...ZERO_REQUEST_COUNTS }, closed: undefined, lastWritten: '' };
      this.days.set(key, state);
    }
    if (state.day !== today) {
      state.closed = { day: state.day, counts: subtractRequestCounts(current, state.dayStart) };
      state.day = today;
      state.dayStart = current;
    }
    const days = new Map<string, RequestCounts>();
    if (
      state.closed !== undefined &&
      state.closed.day === previousUtcDay(today) &&
      !isZero(state.closed.counts)
    )
      days.set(state.closed.day, state.closed.counts);
    const todays = subtractRequestCounts(current, state.dayStart);
    if (!isZero(todays)) days.set(today, todays);
    const signature = JSON.stringify([...days]);
    if (signature === state.lastWritten) return;
    try {
      await this.options.write({
        instance: { namespace: counts.namespace, name: counts.name, uid: counts.uid },
        writerId: this.options.writerId,
        days,
      });
      state.lastWritten = signature;
      this.options.onWritten?.('success');
    } catch (err) {
      // Cumulative counts: the next interval's write carries these too.
      this.options.onWritten?.('error');
      this.options.logger.warn('could not write request usage to the activity Lease', {
        instance: key,
        error: errorMessage(err),
      });
    }
  }
}
