import type { ObjectKey } from './object-key.js';
import type { RateLimiter } from './rate-limiter.js';

/** The longest delay setTimeout honours (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * A set of keys waiting to be reconciled, in the shape of client-go's workqueue:
 * - a key added while it waits is not added twice (dedup);
 * - a key is handed to one worker at a time: added while being processed, it is marked dirty and
 *   handed out again only after `done(key)`;
 * - `addAfter` holds a key back; several delayed adds of one key keep the earliest;
 * - `addRateLimited` delays by the key's rate limiter, `forget` resets it.
 * Workers loop `get()` -> reconcile -> `done(key)` until `get()` returns undefined (shut down).
 */
export class WorkQueue {
  private readonly ready: ObjectKey[] = [];
  /** Keys that need processing: queued in `ready`, or processing and to be requeued on done. */
  private readonly dirty = new Set<ObjectKey>();
  private readonly processing = new Set<ObjectKey>();
  private readonly delayed = new Map<ObjectKey, { readyAt: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: ObjectKey | undefined) => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(private readonly rateLimiter: RateLimiter) {}

  /** Keys ready to be handed out (not counting those being processed or delayed). */
  get length(): number {
    return this.ready.length;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  add(key: ObjectKey): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) this.handOut(key, waiter);
    else this.ready.push(key);
  }

  addAfter(key: ObjectKey, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(key);
    const readyAt = Date.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) clearTimeout(pending.timer);
    // Node runs a timer of more than MAX_TIMER_DELAY_MS after 1 ms. Waking early is harmless: the
    // reconcile finds nothing due yet and asks again for the time that is left.
    const timer = setTimeout(
      () => {
        this.delayed.delete(key);
        this.add(key);
      },
      Math.min(delayMs, MAX_TIMER_DELAY_MS),
    );
    this.delayed.set(key, { readyAt, timer });
  }

  /** Requeues after the key's next backoff; the limiter counts one more failure. */
  addRateLimited(key: ObjectKey): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  forget(key: ObjectKey): void {
    this.rateLimiter.forget(key);
  }

  /** Consecutive failures recorded for the key since it last succeeded. */
  failures(key: ObjectKey): number {
    return this.rateLimiter.failures(key);
  }

  /** The next key to process, waiting for one if needed; undefined once shut down. */
  get(): Promise<ObjectKey | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.ready.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks the key's processing finished; if it was added meanwhile, it is queued again. */
  done(key: ObjectKey): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      const waiter = this.waiters.shift();
      if (waiter) this.handOut(key, waiter);
      else this.ready.push(key);
    }
    if (this.processing.size === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  /**
   * Stops handing out keys: waiting workers get undefined, queued and delayed keys are dropped
   * (a restarted or newly elected operator reconciles every object anyway). Resolves once the keys
   * being processed are done, so shutdown never cuts a reconcile in half.
   */
  async shutDown(): Promise<void> {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.ready.length = 0;
    this.waiters.splice(0).forEach((resolve) => resolve(undefined));
    if (this.processing.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private take(key: ObjectKey): ObjectKey {
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private handOut(key: ObjectKey, waiter: (key: ObjectKey) => void): void {
    waiter(this.take(key));
  }
}
