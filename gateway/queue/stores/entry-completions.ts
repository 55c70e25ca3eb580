import type { Redis } from 'ioredis';
import { DELIVERY_GROUP, type QueueKeys } from '../core/keys.js';
import { completeDelivery } from '../scripts/complete-delivery.js';
import { GatheredCalls } from './gathered-calls.js';

/**
 * The completions of finished deliveries (complete-delivery.ts), gathered: every completion asked
 * for while the event loop handles one pass of I/O (the receivers' answers that arrived together)
 * goes to Redis in one script run right after it (setImmediate, not a microtask: each answer is a
 * callback of its own), so a worker draining a backlog pays one round trip and one script call
 * for all of them. A failed run leaves every entry in it pending, to be reclaimed, as a failed
 * completion of one entry would.
 */
export class EntryCompletions {
  private readonly calls: GatheredCalls<{ entryId: string; messageId: string; event: string }, void>;

  constructor(redis: Redis, keys: QueueKeys, eventCap: number) {
    this.calls = new GatheredCalls<{ entryId: string; messageId: string; event: string }, void>(
      setImmediate,
      async (completions) => {
        const args: (string | number)[] = [DELIVERY_GROUP, eventCap];
        for (const c of completions) args.push(c.entryId, c.messageId, c.event);
        await completeDelivery.run(redis, [keys.stream, keys.streamIndex, keys.events], args);
        return completions.map(() => undefined);
      },
    );
  }

  /** `messageId` is '' when the entry's message could not be read; `event` the DELIVERED event, '' for none. */
  complete(entryId: string, messageId: string, event: string): Promise<void> {
    return this.calls.call({ entryId, messageId, event });
  }
}
