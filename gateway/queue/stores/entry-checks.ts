import type { Redis } from 'ioredis';
import type { QueueKeys } from '../core/keys.js';
import type { EntryCheck } from './flow-control-store.js';
import { entryPresent } from '../scripts/entry-present.js';
import { GatheredCalls } from './gathered-calls.js';

/**
 * The checks before a send (entry-present.ts), gathered: every check asked for in one turn of the
 * event loop goes to Redis in one script run when the turn ends (a microtask), so a worker that
 * dispatches a read's batch of n entries pays one round trip and one script call instead of n.
 * A lone check (a worker at a modest rate reads one entry at a time) waits for nothing: it is sent
 * as soon as the code that asked for it yields.
 */
export class EntryChecks {
  private readonly calls: GatheredCalls<{ entryId: string; active: string }, EntryCheck>;

  constructor(redis: Redis, keys: QueueKeys, eventCap: number) {
    this.calls = new GatheredCalls(queueMicrotask, async (checks) => {
      const args: (string | number)[] = [eventCap];
      for (const check of checks) args.push(check.entryId, check.active);
      const present = (await entryPresent.run(redis, [keys.stream, keys.events], args)) as number[];
      return present.map((one): EntryCheck => (one === 1 ? 'deliver' : 'gone'));
    });
  }

  /**
   * 'deliver' while the entry is on the stream, its ACTIVE event then recorded (unless `active` is
   * ''), else 'gone': the caller's answer as it is, with no async step of its own to map it.
   */
  check(entryId: string, active: string): Promise<EntryCheck> {
    return this.calls.call({ entryId, active });
  }
}
