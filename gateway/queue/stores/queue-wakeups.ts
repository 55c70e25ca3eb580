import type { Redis } from 'ioredis';

/**
 * Runs a queue's dispatch (the slot audit) and answers how long until its oldest waiting message
 * is due when that message is delayed and blocks the queue, else undefined.
 */
export type QueueDispatch = (queue: string) => Promise<number | undefined>;

/**
 * Starts a queue's delayed oldest message at its due time rather than at the next maintenance
 * pass (up to one poll interval later). The dispatch stops at a waiting message that is not due
 * (strict FIFO, dispatch-queue.ts), and nothing else runs a queue's dispatch until a slot frees or
 * a message arrives; so this replica arms one timer per queue, for the earliest due time it knows
 * of (a delayed message it enqueued, or a delayed oldest message its audit, a release, a cancel,
 * a DLQ retry, a resume or a larger parallelism stopped at), and at that time runs the queue's
 * dispatch, re-arming for the next delayed oldest message the dispatch reports. The timers are
 * this process's only: if it dies, every replica's maintenance pass still runs the dispatch each
 * poll interval, and its audit re-arms the timer on that replica.
 */
export class QueueWakeups {
  private readonly armed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly dispatch: QueueDispatch,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `queue`'s dispatch in `waitMs` ms, unless a wake-up of it is already armed for no later. */
  wakeIn(queue: string, waitMs: number): void {
    if (this.stopped) return;
    const at = this.now() + Math.max(0, waitMs);
    const armed = this.armed.get(queue);
    if (armed && armed.at <= at) return;
    if (armed) clearTimeout(armed.timer);
    const timer = setTimeout(() => void this.wake(queue, at), at - this.now());
    // A pending wake-up never keeps the process alive: the maintenance pass is the fallback.
    timer.unref();
    this.armed.set(queue, { at, timer });
  }

  /** How many queues have a wake-up armed. */
  get size(): number {
    return this.armed.size;
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.armed.values()) clearTimeout(timer);
    this.armed.clear();
  }

  private async wake(queue: string, at: number): Promise<void> {
    if (this.armed.get(queue)?.at === at) this.armed.delete(queue);
    let waitMs: number | undefined;
    try {
      waitMs = await this.dispatch(queue);
    } catch {
      // The database is unreachable or the queue went away: the maintenance pass runs the
      // dispatch again each poll interval, and re-arms the wake-up when it finds a delayed head.
      return;
    }
    // The server's clock can run behind this one, so the head may still be a few ms from due.
    if (waitMs !== undefined) this.wakeIn(queue, waitMs);
  }
}

const byConnection = new WeakMap<Redis, QueueWakeups>();

/**
 * The wake-ups of the queues of the database behind `redis`, the binding's shared command
 * connection: one set per database per process, shared by the API's request-scoped stores, the
 * delivery worker and the schedule ticker, so each queue has at most one timer here. Stopped when
 * the connection ends (the binding went away or the gateway shuts down).
 */
export function queueWakeupsOn(redis: Redis, dispatch: QueueDispatch): QueueWakeups {
  let wakeups = byConnection.get(redis);
  if (!wakeups) {
    const created = new QueueWakeups(dispatch);
    redis.once('end', () => created.stop());
    byConnection.set(redis, created);
    wakeups = created;
  }
  return wakeups;
}
