/** Calls one script run carries at most; a worker's batch (its concurrency) is far less. */
const MAX_CALLS_PER_RUN = 500;

interface PendingCall<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (err: unknown) => void;
}

/**
 * Calls to one script gathered into one run: the first call schedules a flush (`schedule`: a
 * microtask, or setImmediate to also take in the I/O callbacks of the same event-loop pass), and
 * every call made before it goes to Redis together, so n calls cost one round trip and one script
 * call instead of n. A lone call waits for nothing but what `schedule` names: no timer is
 * involved. Each caller's promise settles with the run that carried its item: with its own result
 * on success, with the run's error otherwise.
 */
export class GatheredCalls<Item, Result> {
  private pending: PendingCall<Item, Result>[] = [];

  constructor(
    private readonly schedule: (flush: () => void) => void,
    /** Runs the script for `items`; answers one result per item, in order. */
    private readonly runAll: (items: readonly Item[]) => Promise<readonly Result[]>,
  ) {}

  call(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) this.schedule(() => this.flush());
      this.pending.push({ item, resolve, reject });
    });
  }

  private flush(): void {
    const calls = this.pending;
    this.pending = [];
    for (let i = 0; i < calls.length; i += MAX_CALLS_PER_RUN)
      void this.run(calls.slice(i, i + MAX_CALLS_PER_RUN));
  }

  private async run(calls: readonly PendingCall<Item, Result>[]): Promise<void> {
    try {
      const results = await this.runAll(calls.map((c) => c.item));
      for (const [i, c] of calls.entries()) c.resolve(results[i]!);
    } catch (err) {
      for (const c of calls) c.reject(err);
    }
  }
}
