import type { Logger } from 'winston';
import { errorMessage } from '../../observability/logger.js';
import type { ActivityLeaseWriter, ActivityRenewal } from './activity-lease.js';
import type { InstanceRef } from '../instance-ref.js';

export interface ActivityReporterOptions {
  write: ActivityLeaseWriter;
  /** At most one renewal per instance per interval (the contract's ACTIVITY_REPORT_INTERVAL_MS). */
  intervalMs: number;
  holderIdentity: string;
  /**
   * Whether the instance's renewal may wait: it is waking or starting (the gateway has no address
   * to send its requests to, and the operator does not report it Running). The operator's idle clock
   * starts only once CouchDB is Ready (hibernation.ts), so a renewal before then tells it nothing, and
   * each one is an API write, watched, and a reconcile, on the cores the engine boots on. A
   * postponed renewal is looked at again one interval later, as a due one would be.
   */
  postpone?: (instanceKey: string) => boolean;
  onRenewed?: (outcome: 'success' | 'error') => void;
  logger: Logger;
  now?: () => number;
}

interface InstanceActivity {
  instance: ActivityRenewal['instance'];
  /** Requests of this instance whose responses have not ended: streams, long polls, uploads. */
  open: number;
  /** A request arrived since the last renewal. */
  dirty: boolean;
  lastWriteAt: number;
  writing: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The demand signal: records requests and open responses per instance and renews the instance's
 * activity Lease, throttled: the first request after a quiet interval renews at once (so an
 * instance about to be hibernated hears of it), then at most once per interval while requests
 * keep arriving or any response (a continuous _changes feed, a replication) stays open.
 * 1,000 requests a second to one instance cost one API write per interval.
 */
export class ActivityReporter {
  private readonly activity = new Map<string, InstanceActivity>();
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly options: ActivityReporterOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * A request for the instance arrived; `end` must be called once its response is over. Runs for
   * every request, so it allocates only for an instance not seen in the last interval: the Lease's
   * identity is built then, from `ref` and `uid`, not by the caller on every request.
   */
  begin(instanceKey: string, ref: InstanceRef, uid: string | undefined): void {
    let state = this.activity.get(instanceKey);
    if (!state) {
      state = {
        instance: { namespace: ref.namespace, name: ref.name, uid },
        open: 0,
        dirty: false,
        lastWriteAt: -Infinity,
        writing: undefined,
        timer: undefined,
      };
      this.activity.set(instanceKey, state);
    }
    state.open += 1;
    state.dirty = true;
    if (!state.writing && !state.timer) this.schedule(instanceKey, state);
  }

  end(instanceKey: string): void {
    const state = this.activity.get(instanceKey);
    if (state && state.open > 0) state.open -= 1;
  }

  /** How many responses are open for an instance (for tests and the open-streams annotation). */
  openCount(instanceKey: string): number {
    return this.activity.get(instanceKey)?.open ?? 0;
  }

  /** Stops renewing and waits for writes in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    const writes: Array<Promise<void>> = [];
    for (const state of this.activity.values()) {
      clearTimeout(state.timer);
      if (state.writing) writes.push(state.writing);
    }
    await Promise.all(writes);
  }

  private schedule(key: string, state: InstanceActivity): void {
    if (this.stopped) return;
    const due = state.lastWriteAt + this.options.intervalMs;
    const now = this.now();
    if (now >= due && !this.options.postpone?.(key)) {
      this.renew(key, state);
      return;
    }
    state.timer = setTimeout(
      () => {
        state.timer = undefined;
        this.tick(key, state);
      },
      now >= due ? this.options.intervalMs : due - now,
    );
  }

  private tick(key: string, state: InstanceActivity): void {
    // Nothing waits for the instance any more (its held requests timed out) and it is still not up:
    // what they asked for needs no renewal, and a later request starts again.
    const abandoned = state.open === 0 && this.options.postpone?.(key) === true;
    if (!abandoned && (state.dirty || state.open > 0)) this.schedule(key, state);
    // A quiet interval has passed since the last renewal, so the next request may renew at once.
    else if (this.activity.get(key) === state) this.activity.delete(key);
  }

  private renew(key: string, state: InstanceActivity): void {
    state.dirty = false;
    state.lastWriteAt = this.now();
    const renewal: ActivityRenewal = {
      instance: state.instance,
      holderIdentity: this.options.holderIdentity,
      renewTime: new Date(state.lastWriteAt),
      openStreams: state.open,
    };
    state.writing = this.options.write(renewal).then(
      () => this.options.onRenewed?.('success'),
      (err: unknown) => {
        // Renewed again on the next interval; the idle period is minutes, an interval seconds.
        state.dirty = true;
        this.options.onRenewed?.('error');
        this.options.logger.warn('could not renew the activity Lease', {
          instance: key,
          error: errorMessage(err),
        });
      },
    );
    void state.writing.finally(() => {
      state.writing = undefined;
      if (this.stopped) return;
      state.timer = setTimeout(
        () => {
          state.timer = undefined;
          this.tick(key, state);
        },
        Math.max(0, state.lastWriteAt + this.options.intervalMs - this.now()),
      );
    });
  }
}
