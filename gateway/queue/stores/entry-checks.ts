import type { Redis } from 'ioredis';
import type { QueueKeys } from '../core/keys.js';
import { entryPresent } from '../scripts/entry-present.js';

interface PendingCheck {
  entryId: string;
  /** The attempt's ACTIVE event (JSON), '' for none. */
  active: string;
  resolve: (present: boolean) => void;
  reject: (err: unknown) => void;
}

/** Entries one script run checks at most; a read's batch is the worker's concurrency, far less. */
const MAX_CHECKS_PER_RUN = 500;

/**
 * The checks before a send (entry-present.ts), gathered: every check asked for in one turn of the
 * event loop goes to Redis in one script run when the turn ends (a microtask), so a worker that
 * dispatches a read's batch of n entries pays one round trip and one script call instead of n.
 * A lone check (a worker at a modest rate reads one entry at a time) waits for nothing: it is sent
 * as soon as the code that asked for it yields.
 */
export class EntryChecks {
  private pending: PendingCheck[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap: number,
  ) {}

  /** True while the entry is on the stream, its ACTIVE event then recorded (unless `active` is ''). */
  isPresent(entryId: string, active: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) queueMicrotask(() => this.flush());
      this.pending.push({ entryId, active, resolve, reject });
    });
  }

  private flush(): void {
    const checks = this.pending;
    this.pending = [];
    for (let i = 0; i < checks.length; i += MAX_CHECKS_PER_RUN)
      void this.run(checks.slice(i, i + MAX_CHECKS_PER_RUN));
  }

  private async run(checks: readonly PendingCheck[]): Promise<void> {
    const args: (string | number)[] = [this.eventCap];
    for (const check of checks) args.push(check.entryId, check.active);
    try {
      const present = (await entryPresent.run(
        this.redis,
        [this.keys.stream, this.keys.events],
        args,
      )) as number[];
      for (const [i, check] of checks.entries()) check.resolve(present[i] === 1);
    } catch (err) {
      for (const check of checks) check.reject(err);
    }
  }
}
